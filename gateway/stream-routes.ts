import type { FastifyInstance, FastifyReply } from 'fastify';
import type { Publisher } from '../actors/acked-publisher.js';
import { pactError } from '../protocol/errors.js';
import { VerifierStopped, type Verifier } from '../protocol/verify-pool.js';
import type { AccessGate } from '../access/gate.js';
import type { Clock } from '../runtime/clock.js';
import type { StreamEvent } from '../stream/event.js';
import type { EventProjector } from '../stream/event-projector.js';
import { HOUR_MS, type EventStore, type Quota } from '../stream/event-store.js';
import { storeEvent } from '../stream/store-event.js';
import { longPoll } from '../stream/long-poll.js';
import { DEFAULT_LIMIT, pullPage, startOf, type PullPage, type PullRequest, type Reputations } from '../stream/pull.js';
import { pullSchema } from '../stream/schemas.js';
import { streamEventProblem } from '../stream/validate.js';
import { JSON_TYPE, READ_YOUR_WRITES_WAIT_MS } from './answer.js';
import { sendError } from './errors.js';
import { pullCost, TokenBuckets } from './token-buckets.js';
import { limitFor, type RateLimits } from './rate-limits.js';

export interface StreamRouteDeps {
  rateLimits: RateLimits;
  clock: Clock;
  stream: {
    publisher: Publisher;
    store: EventStore;
    projector: EventProjector;
    /** Checks events' signatures (the node's verification pool). */
    verifier: Verifier;
    /** Who may publish on an invite-mode server. */
    gate: AccessGate;
    /** Events kept per publisher per hour (PACT_EVENT_QUOTA), and the server's party, which is exempt. */
    quota: Quota;
    /** Pull tokens per IP per minute (PACT_RATE_LIMIT_PULLS); 0 turns the limit off. */
    pullsPerMinute: number;
    /** Long polls that may wait at once on this node (PACT_PULL_WAITERS). */
    pullWaiters: number;
    reputations: Reputations;
  };
}

/** An event is at most 32 KiB as received (escrow-service.md, Limits); larger is 413. */
const MAX_EVENT_BYTES = 32 * 1024;

/** The Agent Stream: `POST /v0/events` and `POST /v0/pull`. Events cannot approve, object, settle or move funds. */
export function registerStreamRoutes(app: FastifyInstance, deps: StreamRouteDeps): void {
  const { publisher, store, projector, verifier, quota, pullsPerMinute } = deps.stream;
  const tokens = pullsPerMinute > 0 ? new TokenBuckets(pullsPerMinute) : undefined;
  const overQuota = (reply: FastifyReply, now: number) => {
    const retryAfter = Math.ceil((HOUR_MS - (now % HOUR_MS)) / 1000);
    return sendError(reply, pactError('quota_exceeded', `more than ${quota.perHour} events of this publisher this hour`, { retryAfter }));
  };
  let waiting = 0;

  app.post<{ Body: unknown }>('/v0/events', { ...limitFor(deps.rateLimits, 'writes'), bodyLimit: MAX_EVENT_BYTES }, async (request, reply) => {
    const now = deps.clock.now();
    let refused;
    try {
      refused = await streamEventProblem(request.body, now, quota.exempt, verifier);
    } catch (error) {
      if (!(error instanceof VerifierStopped)) throw error;
      return sendError(reply, pactError('unavailable', 'the signature could not be checked now; publish it again'));
    }
    if (refused) return sendError(reply, refused);
    const event = request.body as StreamEvent;
    const closed = await deps.stream.gate.problem(event.publisher);
    if (closed) return sendError(reply, closed);
    const accepted = { accepted: true, eventId: event.id };
    if (store.seqOf(event.id) !== undefined) return accepted; // published before: idempotent, not counted again
    if (store.takenInHour(event.publisher, now) >= quota.perHour) return overQuota(reply, now);
    let seq: number;
    try {
      seq = await storeEvent(publisher, event, now, projector);
    } catch {
      return sendError(reply, pactError('unavailable', 'the event could not be stored now; publish it again (it is idempotent)'));
    }
    // Whether the event is kept is the stream's order to say (the quota is applied there, the same on every
    // node): the answer waits for this node's store to have read that far.
    await projector.reached(seq, READ_YOUR_WRITES_WAIT_MS);
    if (store.seqOf(event.id) !== undefined) return accepted;
    if (projector.reachedSeq >= seq) return overQuota(reply, now);
    return sendError(reply, pactError('unavailable', 'the event is stored but not yet confirmed; publish it again (it is idempotent)'));
  });

  app.post<{ Body: PullRequest }>('/v0/pull', { schema: { body: pullSchema } }, async (request, reply) => {
    const body = request.body ?? {};
    const limited = tokens?.take(request.ip, pullCost(body.waitSeconds ?? 0), Date.now());
    if (limited) {
      return sendError(reply, pactError('rate_limited', 'too many pulls from this address; a long poll costs more', limited));
    }
    const after = await startOf(body, store);
    if (typeof after !== 'number') return sendError(reply, after);
    const waitSeconds = body.waitSeconds ?? 0;
    if (waitSeconds === 0) return sendPage(reply, await pageAfter(deps, after, body));
    if (waiting >= deps.stream.pullWaiters) {
      return sendError(reply.header('retry-after', '1'), pactError('rate_limited', 'too many long polls wait on this server; retry shortly'));
    }
    const gone = new AbortController();
    const abort = () => gone.abort();
    reply.raw.once('close', abort);
    if (request.raw.socket.destroyed) abort(); // the client left while the pull's start was read
    waiting++;
    try {
      const page = (from: number) => pageAfter(deps, from, body);
      return sendPage(reply, await longPoll(page, deps.stream.projector, after, Date.now() + waitSeconds * 1000, gone.signal));
    } finally {
      waiting--;
      reply.raw.off('close', abort); // answered: nothing is left to abort
    }
  });
}

/** The page of matching events after `after` now. */
const pageAfter = ({ stream, clock }: StreamRouteDeps, after: number, request: PullRequest) =>
  pullPage(stream.store, after, request.limit ?? DEFAULT_LIMIT, request.filter ?? {}, clock.now(), stream.reputations);

/** `{ events, nextCursor, hasMore }` around the events' stored JSON texts, never parsed. */
const sendPage = (reply: FastifyReply, page: PullPage) =>
  reply.type(JSON_TYPE).send(`{"events":[${page.events.join(',')}],"nextCursor":"${page.nextCursor}","hasMore":${page.hasMore}}`);
