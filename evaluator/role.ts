import { AckPolicy, DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import type { CommandReply } from '../actors/messages.js';
import { decodeEntry } from '../actors/journal.js';
import { PULL, type Nats } from '../actors/nats.js';
import { JOURNAL_STREAM, JOURNAL_WILDCARD } from '../actors/subjects.js';
import type { Pact, VerdictBody } from '../machines/pact/types.js';
import { signed, type KeyPair } from '../protocol/sign.js';
import type { Clock } from '../runtime/clock.js';
import { frozenInputOf, isDisputed } from './frozen-input.js';
import { EvaluatorFailure, type Judge, type Judgement } from './judge.js';
import { MAX_REASON_CHARS } from './judgement.js';
import type { ServiceClient } from './service-client.js';

/** A journal consumer of the role's own: a connection that may read the journal, and the consumer's name. */
export interface JournalConsumer {
  nats: Nats;
  /** The durable consumer's name: evaluators that share it share the disputes it delivers. */
  consumerName: string;
}

export interface EvaluatorRoleDeps {
  /**
   * How the role hears of a dispute as it opens (the sweep finds the others): from a consumer of its own on
   * the journal (`npm run evaluator`), or from whoever calls `noticed` with each pact written (a node's
   * projector, which reads every entry anyway), for the pacts `mine` names (a node's: those of the partitions
   * its host holds, so that one node judges each).
   */
  hears: { journal: JournalConsumer } | { mine: (pactId: string) => boolean };
  service: ServiceClient;
  /** Sends a verdict through the command path of `POST /pacts/:id/verdict`. */
  submit: (pactId: string, verdict: VerdictBody) => Promise<CommandReply>;
  /** The pinned evaluator key; it signs verdicts and blob links, and appears nowhere else. */
  key: KeyPair;
  clock: Clock;
  /** PACT_EVALUATOR_ATTEMPT_MS: the longest one judgement may take (a model that hangs holds no more). */
  attemptMs: number;
}

/** A dispute to judge. */
interface Job {
  pactId: string;
  /** The pact's stateNonce once the entry that opened the dispute is applied: a read behind it is retried. */
  nonce: number;
  /** Judgements tried so far, and reads of the service or sends of a verdict that failed. */
  judged: number;
  failedReads: number;
}

/**
 * `done`: nothing more to do for this dispute here. `retry` after a failure of the service or the host;
 * `judgeFailed` after the judge failed (tried again up to JUDGEMENTS times); `dropped`: this process no
 * longer judges (mode none, stopping).
 */
type Outcome = 'done' | 'retry' | 'judgeFailed' | 'dropped';

const EVALUATIONS_AT_ONCE = 8;
/** Judgements tried per dispute; failures between them wait JUDGE_RETRY_MS (doubling). */
const JUDGEMENTS = 3;
const JUDGE_RETRY_MS = 30_000;
/** A failed read of the service or send of a verdict is tried again after RETRY_MS, doubling up to MAX_RETRY_MS. */
const RETRY_MS = 2_000;
const MAX_RETRY_MS = 5 * 60_000;
const SWEEP_EVERY_MS = 60_000;
/** The bytes that mark an objection's entry (JSON.stringify puts the event's type first). */
const OBJECTION = '"event":{"type":"object"';

/**
 * The evaluator role. It hears of each dispute as it opens (an `object` entry on its own journal consumer, or
 * a DISPUTED pact it is told of), and for each one it reads the pact, assembles the frozen input, lets its
 * judge decide (each try at most `attemptMs`, never past `verdictBy`), signs the verdict with the pinned key
 * and submits it. A judge that fails JUDGEMENTS times ends nothing: the dispute then ends by `onFailure`
 * when `verdictBy` is poked. Neither way of hearing is kept durably: disputes are also found by a sweep of
 * the DISPUTED pacts at start and every minute, which brings back whatever a crash or a stop interrupted. A
 * verdict submitted twice applies once: the first moves the pact out of DISPUTED.
 */
export class EvaluatorRole {
  private messages: ConsumerMessages | undefined;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly queue: Job[] = [];
  /** Pacts queued, being judged or waiting to be tried again: one job per dispute. */
  private readonly pending = new Set<string>();
  /**
   * Disputes this process is done with (judged, or its judge failed every time): the sweep leaves them.
   * Kept in memory: after a restart each open dispute is judged once more.
   */
  private dealtWith = new Set<string>();
  private running = 0;
  private stopped = false;
  /** Between `follow` and `unfollow`: judging what it hears of (not before start, when the service may not answer yet). */
  private following = false;

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

  /** A pact was written: a dispute of its own this process has not dealt with is judged. Cheap for any other pact. */
  noticed(pact: Pact): void {
    if (!this.following || !isDisputed(pact) || this.dealtWith.has(pact.id)) return;
    if (!('mine' in this.deps.hears) || !this.deps.hears.mine(pact.id)) return;
    this.enqueue({ pactId: pact.id, nonce: pact.stateNonce, judged: 0, failedReads: 0 });
  }

  private async follow(): Promise<void> {
    this.following = true;
    const { hears } = this.deps;
    if ('journal' in hears) this.messages = await consume(hears.journal, (data, subject) => this.arrived(data, subject));
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_EVERY_MS);
    void this.sweep();
  }

  private async unfollow(): Promise<void> {
    this.following = false;
    clearInterval(this.sweeper);
    await this.messages?.close();
    this.messages = undefined;
  }

  /** An objection opens a dispute; other entries are told apart by their bytes, without parsing them. */
  private arrived(data: Uint8Array, subject: string): void {
    if (Buffer.from(data.buffer, data.byteOffset, data.length).indexOf(OBJECTION) < 0) return;
    const entry = decodeEntry(data, subject);
    if (entry?.event.type === 'object') this.enqueue({ pactId: entry.pactId, nonce: entry.nonce, judged: 0, failedReads: 0 });
  }

  private async sweep(): Promise<void> {
    try {
      const open = new Set<string>();
      for await (const pactId of this.deps.service.disputed()) {
        open.add(pactId);
        if (!this.dealtWith.has(pactId)) this.enqueue({ pactId, nonce: 0, judged: 0, failedReads: 0 });
      }
      this.dealtWith = new Set([...this.dealtWith].filter((pactId) => open.has(pactId)));
    } catch (error) {
      console.error('evaluator could not list the disputes:', String(error));
    }
  }

  private enqueue(job: Job): void {
    if (this.pending.has(job.pactId) || this.stopped) return;
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
    let outcome: Outcome;
    try {
      outcome = await this.evaluate(job);
    } catch (error) {
      console.error(`evaluator: pact ${job.pactId}: ${String(error)}; trying again`);
      outcome = 'retry';
    }
    const again = delayBeforeNext(job, outcome);
    if (again === undefined) {
      this.pending.delete(job.pactId);
      if (outcome !== 'dropped') this.dealtWith.add(job.pactId);
      return;
    }
    setTimeout(() => {
      this.pending.delete(job.pactId);
      this.enqueue(job);
    }, again).unref();
  }

  private async evaluate(job: Job): Promise<Outcome> {
    const judge = this.judge;
    if (!judge || this.stopped) return 'dropped';
    const pact = await this.deps.service.pact(job.pactId);
    if (!pact || pact.stateNonce < job.nonce) return 'retry'; // the read model has not got there yet
    if (!isDisputed(pact) || pact.evaluator.pubkey !== this.deps.key.party) return 'done'; // not ours to judge
    const remainingMs = pact.verdictBy! - this.deps.clock.now();
    if (remainingMs <= 0) return 'done'; // too late: the pact ends by onFailure
    const input = await frozenInputOf(pact, this.deps.service, judge.evidenceBytes);
    let judgement: Judgement;
    job.judged++;
    try {
      judgement = await judge.judge(input, AbortSignal.timeout(Math.min(this.deps.attemptMs, pact.evaluator.timeoutMs, remainingMs)));
    } catch (error) {
      const reason = error instanceof EvaluatorFailure ? error.message : `the ${judge.mode} judge failed: ${String(error)}`;
      const next = job.judged < JUDGEMENTS ? `judging again later (${job.judged} of ${JUDGEMENTS})` : 'it ends by onFailure at verdictBy';
      console.error(`evaluator: pact ${pact.id}: no verdict (${reason}); ${next}`);
      return 'judgeFailed';
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

/** How long before `job` is tried again after `outcome`; undefined when it is not. */
function delayBeforeNext(job: Job, outcome: Outcome): number | undefined {
  if (outcome === 'retry') return Math.min(RETRY_MS * 2 ** Math.min(job.failedReads++, 8), MAX_RETRY_MS);
  if (outcome === 'judgeFailed' && job.judged < JUDGEMENTS) return JUDGE_RETRY_MS * 2 ** (job.judged - 1);
  return undefined;
}

/**
 * Reads the journal's new entries with the durable consumer `consumerName`, without acks, handing each one
 * to `arrived`; made anew when one of another ack policy is found under that name.
 */
async function consume({ nats: { jsm, js }, consumerName: name }: JournalConsumer, arrived: (data: Uint8Array, subject: string) => void): Promise<ConsumerMessages> {
  const existing = await jsm.consumers.info(JOURNAL_STREAM, name).catch(() => undefined);
  if (existing && existing.config.ack_policy !== AckPolicy.None) await jsm.consumers.delete(JOURNAL_STREAM, name);
  if (!existing || existing.config.ack_policy !== AckPolicy.None) {
    await jsm.consumers.add(JOURNAL_STREAM, {
      durable_name: name,
      filter_subject: JOURNAL_WILDCARD,
      ack_policy: AckPolicy.None,
      // Earlier disputes are found by the sweep, not by reading the whole journal.
      deliver_policy: DeliverPolicy.New,
    });
  }
  const messages = await (await js.consumers.get(JOURNAL_STREAM, name)).consume(PULL);
  void (async () => {
    for await (const message of messages) arrived(message.data, message.subject);
  })().catch((error) => console.error('evaluator stopped reading the journal:', String(error)));
  return messages;
}
