import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { OfferDesk } from '../actors/offer-desk.js';
import type { AcceptCall, SignedOffer } from '../machines/offer/types.js';
import { pactError } from '../protocol/errors.js';
import { OFFER_ID } from '../protocol/ids.js';
import { offerSchema, offerSearchQuery, offerTagPattern, offerWatchQuery, SERVER_OWNED_FIELDS, signedCallSchema } from '../protocol/schemas.js';
import type { OfferFilter, OfferReadModel } from '../projection/offer-read-model.js';
import { tagKeyOf, wordsOf } from '../projection/offer-read-model.js';
import type { OfferProjector } from '../projection/offer-projector.js';
import type { Projector } from '../projection/projector.js';
import type { TimePage } from '../projection/time-pages.js';
import type { Clock } from '../runtime/clock.js';
import { answerWith, JSON_TYPE, READ_YOUR_WRITES_WAIT_MS } from './answer.js';
import { sendError } from './errors.js';
import type { OfferWatchers } from './offer-watchers.js';
import { limitFor, type RateLimits } from './rate-limits.js';
import { signedForThisRoute } from './signed-call.js';

export interface OfferRouteDeps {
  rateLimits: RateLimits;
  projector: Projector;
  clock: Clock;
  offers: { desk: OfferDesk; readModel: OfferReadModel; projector: OfferProjector; watchers: OfferWatchers };
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const MAX_WATCH_MS = 30_000;
/** A search reads one index per tag and word: this many at most. */
const MAX_TAGS = 8;
const MAX_WORDS = 8;

type Query = Record<string, string | undefined>;
type Params = { id: string };

const TAG = new RegExp(offerTagPattern);
const unknownOffer = (id: string) => pactError('not_found', `no offer ${id}`);

/** The offers registry: publish, search, watch, accept. Signatures and every rule are the desk's. */
export function registerOfferRoutes(app: FastifyInstance, deps: OfferRouteDeps): void {
  const { desk, readModel, projector, watchers } = deps.offers;
  const writes = limitFor(deps.rateLimits, 'writes');
  const lists = limitFor(deps.rateLimits, 'lists');

  app.post<{ Body: SignedOffer }>('/offers', { ...writes, schema: { body: offerSchema }, preValidation: noServerOwnedFields }, async (request, reply) => {
    const published = await desk.publish(request.body);
    if (!published.ok) return sendError(reply, published.error);
    await projector.reached(published.seq, READ_YOUR_WRITES_WAIT_MS);
    // As listed: with its place in the listing (`listedAt`), which the journal's order gives it.
    return { offer: (await readModel.get(published.offer.offerId)) ?? published.offer };
  });

  app.get<{ Querystring: Query }>('/offers', { ...lists, schema: { querystring: offerSearchQuery } }, async (request, reply) => {
    const filter = filterOf(request.query, deps.clock.now());
    if ('error' in filter) return sendError(reply, filter);
    return sendPage(reply, await readModel.search(filter));
  });

  app.get<{ Querystring: Query }>('/offers/watch', { ...lists, schema: { querystring: offerWatchQuery } }, async (request, reply) => {
    const filter = filterOf(request.query, deps.clock.now());
    if ('error' in filter) return sendError(reply, filter);
    const timeoutMs = request.query.timeoutMs === undefined ? MAX_WATCH_MS : Number(request.query.timeoutMs);
    if (timeoutMs > MAX_WATCH_MS) return sendError(reply, pactError('invalid_request', `timeoutMs is at most ${MAX_WATCH_MS}`, { field: 'timeoutMs' }));
    if (watchers.full) return sendError(reply.header('retry-after', '1'), pactError('rate_limited', 'too many watchers wait on this server; retry shortly'));
    const gone = new AbortController();
    reply.raw.once('close', () => gone.abort());
    return sendPage(reply, await watchers.watch(filter, timeoutMs, gone.signal));
  });

  const answer = answerWith(deps.projector);
  app.post<{ Params: Params; Body: AcceptCall }>(
    '/offers/:id/accept',
    { ...writes, schema: { body: signedCallSchema('offers.accept') }, preValidation: signedForThisRoute('offers.accept') },
    async (request, reply) => {
      const { id } = request.params;
      if (!OFFER_ID.test(id)) return sendError(reply, unknownOffer(id));
      return answer(reply, await desk.accept(id, request.body));
    },
  );
}

/** `{ offers, nextSince }` around the offers' stored JSON texts, never parsed. */
const sendPage = (reply: FastifyReply, page: TimePage<string>) =>
  reply.type(JSON_TYPE).send(`{"offers":[${page.items.join(',')}],"nextSince":${JSON.stringify(page.nextSince)}}`);

/** The filters of a search or watch; 400 for a limit above the maximum. */
function filterOf(query: Query, now: number): OfferFilter | ReturnType<typeof pactError> {
  const limit = query.limit === undefined ? DEFAULT_LIMIT : Number(query.limit);
  if (limit > MAX_LIMIT) return pactError('invalid_request', `limit is at most ${MAX_LIMIT}`, { field: 'limit' });
  const tags = (query.tags ?? '').split(',').map((tag) => tag.trim()).filter(Boolean);
  if (!tags.every((tag) => TAG.test(tag))) return pactError('invalid_request', 'a tag is 1 to 64 characters, without whitespace or "!"', { field: 'tags' });
  const distinct = [...new Set(tags.map(tagKeyOf))];
  if (distinct.length > MAX_TAGS) return pactError('invalid_request', `at most ${MAX_TAGS} tags`, { field: 'tags' });
  const words = wordsOf(query.q ?? '');
  if (words.length > MAX_WORDS) return pactError('invalid_request', `q has at most ${MAX_WORDS} words`, { field: 'q' });
  return {
    tags: distinct,
    words,
    ...(query.by !== undefined ? { by: query.by } : {}),
    ...(query.since !== undefined ? { since: Number(query.since) } : {}),
    limit,
    now,
  };
}

/**
 * The evaluator policy and the fee recipient are the server's: an offer or template naming them is refused
 * with its own code (400 `evaluator_policy_is_server_owned`) before the schema would call it an unknown field.
 * `evaluator: {}` says nothing and is accepted, as in a pact spec.
 */
async function noServerOwnedFields(request: FastifyRequest, reply: FastifyReply) {
  const body = request.body as { template?: unknown } | null;
  if (typeof body !== 'object' || body === null) return;
  for (const [where, part] of [['', body], ['template.', body.template]] as const) {
    if (typeof part !== 'object' || part === null) continue;
    for (const field of SERVER_OWNED_FIELDS) {
      const value = (part as Record<string, unknown>)[field];
      if (value === undefined || (field === 'evaluator' && isEmptyObject(value))) continue;
      return sendError(reply, pactError('evaluator_policy_is_server_owned', 'the evaluator policy and fee recipient are set by the server', { field: `${where}${field}` }));
    }
  }
}

const isEmptyObject = (value: unknown) => typeof value === 'object' && value !== null && !Array.isArray(value) && Object.keys(value).length === 0;
