import { AckPolicy, DeliverPolicy, type ConsumerMessages, type JsMsg } from '@nats-io/jetstream';
import type { CommandReply } from '../actors/messages.js';
import { decodeEntry } from '../actors/journal.js';
import { PULL, type Nats } from '../actors/nats.js';
import { JOURNAL_STREAM, JOURNAL_WILDCARD } from '../actors/subjects.js';
import type { VerdictBody } from '../machines/pact/types.js';
import { signed, type KeyPair } from '../protocol/sign.js';
import type { Clock } from '../runtime/clock.js';
import { frozenInputOf, isDisputed } from './frozen-input.js';
import { EvaluatorFailure, type Judge, type Judgement } from './judge.js';
import { MAX_REASON_CHARS } from './judgement.js';
import type { ServiceClient } from './service-client.js';

export interface EvaluatorRoleDeps {
  /** A connection that may read the journal with a consumer of its own and ack on it. */
  nats: Nats;
  /** The durable consumer's name: evaluators that share it share the work. */
  consumerName: string;
  service: ServiceClient;
  /** Sends a verdict through the command path of `POST /pacts/:id/verdict`. */
  submit: (pactId: string, verdict: VerdictBody) => Promise<CommandReply>;
  /** The pinned evaluator key; it signs verdicts and blob links, and appears nowhere else. */
  key: KeyPair;
  clock: Clock;
}

/** A dispute to judge; `message` is the journal entry that opened it, when it came that way. */
interface Job {
  pactId: string;
  /** The pact's stateNonce once that entry is applied: a read model behind it is waited for. */
  nonce: number;
  message?: JsMsg;
  /** Attempts so far of a job without a message (a message counts its deliveries itself). */
  tries: number;
}

/** `dropped`: this process no longer judges (mode none, stopping); an unacked entry comes back to whoever does. */
type Outcome = 'done' | 'retry' | 'dropped';

const EVALUATIONS_AT_ONCE = 4;
const OBJECTION = '"event":{"type":"object"';
/** A failed attempt is tried again after RETRY_MS, doubling each time up to MAX_RETRY_MS. */
const RETRY_MS = 2_000;
const MAX_RETRY_MS = 5 * 60_000;
const WORKING_EVERY_MS = 10_000;
const SWEEP_EVERY_MS = 60_000;
const ACK_WAIT_NS = 30_000 * 1_000_000;

/**
 * The evaluator role: it follows the journal with a durable consumer, and for each dispute (an `object`
 * entry) it reads the pact, assembles the frozen input, lets its judge decide within the pact's time-out,
 * signs the verdict with the pinned key and submits it. A judge that fails ends nothing: the dispute then
 * ends by `onFailure` when `verdictBy` is poked. The journal entry is acked only once the dispute is dealt
 * with, so a crash mid-evaluation brings it back; a verdict submitted twice applies once (the pact is no
 * longer DISPUTED for the second). Disputes opened while no evaluator followed are found by a sweep of the
 * DISPUTED pacts at start and every minute.
 */
export class EvaluatorRole {
  private messages: ConsumerMessages | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly queue: Job[] = [];
  /** Pacts queued or being judged: each is judged by one job at a time. */
  private readonly pending = new Set<string>();
  /**
   * Disputes this process has dealt with (judged, or its judge failed): the sweep does not judge them again,
   * so a failed judgement waits for `verdictBy` instead of asking the model every minute. Kept in memory:
   * after a restart each open dispute is judged once more.
   */
  private dealtWith = new Set<string>();
  private running = 0;
  private stopped = false;

  constructor(
    private readonly deps: EvaluatorRoleDeps,
    private judge: Judge | undefined,
  ) {}

  get mode(): string {
    return this.judge?.mode ?? 'none';
  }

  async start(): Promise<void> {
    if (this.judge) await this.follow();
  }

  /** Switches the judge (`undefined`: this process judges nothing); the test hook uses it. */
  async use(judge: Judge | undefined): Promise<void> {
    const wasFollowing = this.judge !== undefined;
    this.judge = judge;
    this.dealtWith.clear(); // a new judge may judge what the old one failed at
    if (judge && !wasFollowing) await this.follow();
    if (!judge && wasFollowing) await this.unfollow();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.unfollow();
  }

  private async follow(): Promise<void> {
    const { jsm, js } = this.deps.nats;
    const name = this.deps.consumerName;
    const existing = await jsm.consumers.info(JOURNAL_STREAM, name).catch(() => undefined);
    if (!existing) {
      await jsm.consumers.add(JOURNAL_STREAM, {
        durable_name: name,
        filter_subject: JOURNAL_WILDCARD,
        ack_policy: AckPolicy.Explicit,
        ack_wait: ACK_WAIT_NS,
        // Earlier disputes are found by the sweep, not by reading the whole journal.
        deliver_policy: DeliverPolicy.New,
        max_ack_pending: 256,
      });
    }
    this.messages = await (await js.consumers.get(JOURNAL_STREAM, name)).consume(PULL);
    const messages = this.messages;
    void (async () => {
      for await (const message of messages) this.arrived(message);
    })().catch((error) => console.error('evaluator stopped reading the journal:', String(error)));
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    void this.sweep();
  }

  private async unfollow(): Promise<void> {
    clearInterval(this.sweeper);
    await this.messages?.close();
    this.messages = undefined;
  }

  /**
   * Every entry but an objection is acked at once; an objection opens a dispute to judge. Most entries are
   * told apart by their bytes, without parsing them (an entry is JSON.stringify'd with its event's type first).
   */
  private arrived(message: JsMsg): void {
    const data = message.data;
    if (Buffer.from(data.buffer, data.byteOffset, data.length).indexOf(OBJECTION) < 0) return message.ack();
    const entry = decodeEntry(data, message.subject);
    if (!entry || entry.event.type !== 'object') return message.ack();
    this.enqueue({ pactId: entry.pactId, nonce: entry.nonce, message, tries: 0 });
  }

  private async sweep(): Promise<void> {
    try {
      const open = new Set<string>();
      for await (const pactId of this.deps.service.disputed()) {
        open.add(pactId);
        if (!this.dealtWith.has(pactId)) this.enqueue({ pactId, nonce: 0, tries: 0 });
      }
      this.dealtWith = new Set([...this.dealtWith].filter((pactId) => open.has(pactId)));
    } catch (error) {
      console.error('evaluator could not list the disputes:', String(error));
    }
  }

  private enqueue(job: Job): void {
    if (this.pending.has(job.pactId)) {
      job.message?.ack(); // the job already there deals with this dispute
      return;
    }
    this.pending.add(job.pactId);
    this.queue.push(job);
    this.drain();
  }

  private drain(): void {
    while (this.running < EVALUATIONS_AT_ONCE && this.queue.length > 0) {
      const job = this.queue.shift()!;
      this.running++;
      void this.run(job).finally(() => {
        this.running--;
        this.drain();
      });
    }
  }

  private async run(job: Job): Promise<void> {
    const working = job.message ? setInterval(() => job.message!.working(), WORKING_EVERY_MS) : undefined;
    let outcome: Outcome;
    try {
      outcome = await this.evaluate(job);
    } catch (error) {
      console.error(`evaluator: pact ${job.pactId}: ${String(error)}; trying again`);
      outcome = 'retry';
    } finally {
      clearInterval(working);
    }
    this.pending.delete(job.pactId);
    if (outcome === 'dropped') return;
    if (outcome === 'done') {
      this.dealtWith.add(job.pactId);
      return job.message?.ack();
    }
    const tries = job.message?.info.deliveryCount ?? ++job.tries;
    const delay = Math.min(RETRY_MS * 2 ** Math.min(tries - 1, 8), MAX_RETRY_MS);
    if (job.message) return job.message.nak(delay);
    if (!this.stopped) setTimeout(() => this.enqueue(job), delay).unref();
  }

  private async evaluate(job: Job): Promise<Outcome> {
    const judge = this.judge;
    if (!judge || this.stopped) return 'dropped';
    const pact = await this.deps.service.pact(job.pactId);
    if (!pact || pact.stateNonce < job.nonce) return 'retry'; // the read model has not got there yet
    if (!isDisputed(pact) || pact.evaluator.pubkey !== this.deps.key.party) return 'done'; // not ours to judge
    const remainingMs = pact.verdictBy! - this.deps.clock.now();
    if (remainingMs <= 0) return 'done'; // too late: the pact ends by onFailure
    const input = await frozenInputOf(pact, this.deps.service);
    let judgement: Judgement;
    try {
      judgement = await judge.judge(input, AbortSignal.timeout(Math.min(pact.evaluator.timeoutMs, remainingMs)));
    } catch (error) {
      const reason = error instanceof EvaluatorFailure ? error.message : `the ${judge.mode} judge failed: ${String(error)}`;
      console.error(`evaluator: pact ${pact.id}: no verdict (${reason}); it ends by onFailure at verdictBy`);
      return 'done';
    }
    const verdict = this.verdictOf(pact.id, pact.inputHash, judgement);
    const reply = await this.deps.submit(pact.id, verdict);
    if (reply.ok) {
      console.log(`evaluator: pact ${pact.id}: verdict applied (${judge.mode}, feeFrom ${verdict.feeFrom})`);
      return 'done';
    }
    if (reply.error.error === 'unavailable' || reply.error.error === 'internal_error') return 'retry';
    console.error(`evaluator: pact ${pact.id}: verdict refused: ${reply.error.error} ${reply.error.message}`);
    return 'done';
  }

  private verdictOf(pactId: string, inputHash: string, judgement: Judgement): VerdictBody {
    const body = {
      pactId,
      inputHash,
      distribution: judgement.distribution,
      feeFrom: judgement.feeFrom,
      reason: judgement.reason.slice(0, MAX_REASON_CHARS),
      issuedAt: this.deps.clock.now(),
      signer: this.deps.key.party,
    };
    return signed(body, this.deps.key);
  }
}
