import { AckPolicy, DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { decodeEntry, type JournalEntry } from '../actors/journal.js';
import { PULL, type Nats } from '../actors/nats.js';
import { applyEntry } from '../actors/replay.js';
import type { Pact } from '../machines/pact/types.js';
import { JOURNAL_STREAM, JOURNAL_WILDCARD } from '../actors/subjects.js';
import type { ReadModel } from './read-model.js';

type Listener = (pact: Pact, entry: JournalEntry) => void;

const DAY_NS = 86_400 * 1e9;
const RETRY_MS = 1_000;
const RECENT_RECORDS = 1_024;

/**
 * Follows the journal into the read model. A reader that just wrote waits for `reached(seq)`
 * before answering, so a client always reads its own writes.
 */
export class Projector {
  private position = 0;
  private messages: ConsumerMessages | undefined;
  private readonly waiters: { seq: number; resolve: () => void }[] = [];
  private readonly listeners: Listener[] = [];
  private buffer: { seq: number; entry: JournalEntry | undefined }[] = [];
  /** The newest records written, so that replaying the next event of a busy pact needs no read. */
  private readonly recent = new Map<string, Pact>();
  private writing = false;
  private stopped = false;

  private readonly consumerName: string;

  /** `nodeId` names this node's consumer: every node keeps its own read model. */
  constructor(
    private readonly nats: Nats,
    private readonly readModel: ReadModel,
    nodeId: string,
  ) {
    this.consumerName = `projector-${nodeId}`;
  }

  /** The journal position the read model holds. */
  get reachedSeq(): number {
    return this.position;
  }

  onEntry(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * Catches up with everything journaled so far, then keeps following. The consumer is a durable one
   * (replicated with the stream, so it outlives a NATS node), made anew at each start from the read
   * model's own position; the position lives in LevelDB, so no acks are needed.
   */
  async start(): Promise<void> {
    this.position = await this.readModel.checkpoint();
    const target = (await this.nats.jsm.streams.info(JOURNAL_STREAM)).state.last_seq;
    await this.nats.jsm.consumers.delete(JOURNAL_STREAM, this.consumerName).catch(() => undefined);
    await this.nats.jsm.consumers.add(JOURNAL_STREAM, {
      durable_name: this.consumerName,
      filter_subject: JOURNAL_WILDCARD,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.position + 1,
      inactive_threshold: DAY_NS, // a node that never comes back leaves no consumer behind
    });
    const consumer = await this.nats.js.consumers.get(JOURNAL_STREAM, this.consumerName);
    this.messages = await consumer.consume(PULL);
    void (async () => {
      for await (const message of this.messages!) this.enqueue(message.seq, decodeEntry(message.data, message.subject));
    })();
    await this.reached(target);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.messages?.close();
  }

  /**
   * Resolves once the read model holds journal position `seq`, or after `timeoutMs` when one is given:
   * then a lagging read model delays answers but never blocks them.
   */
  reached(seq: number, timeoutMs?: number): Promise<void> {
    if (seq <= this.position) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { seq, resolve: () => (clearTimeout(timer), resolve()) };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.waiters.splice(this.waiters.indexOf(waiter), 1);
              resolve();
            }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  private enqueue(seq: number, entry: JournalEntry | undefined): void {
    if (seq <= this.position) return;
    this.buffer.push({ seq, entry });
    if (!this.writing) void this.writeBuffered();
  }

  /** Writes what arrived while the previous batch was being written, as one batch. */
  private async writeBuffered(): Promise<void> {
    this.writing = true;
    while (this.buffer.length > 0 && !this.stopped) {
      const batch = this.buffer;
      this.buffer = [];
      const seq = batch.at(-1)!.seq;
      let applied: { pact: Pact; entry: JournalEntry }[];
      try {
        applied = await this.replay(batch.map((b) => b.entry));
        await this.readModel.putAll(applied.map((a) => a.pact), seq);
      } catch (error) {
        // Never move past an entry that is not written: put the batch back and try again shortly.
        console.error('projector could not write; retrying in a second:', String(error));
        this.recent.clear();
        this.buffer = [...batch, ...this.buffer];
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      this.position = seq;
      for (const { pact, entry } of applied) {
        this.remember(pact);
        for (const listener of this.listeners) listener(pact, entry);
      }
      this.releaseWaiters();
    }
    this.writing = false;
  }

  /**
   * The pacts the entries lead to, each replayed on the pact's previous record. An entry that cannot be
   * replayed (not ours, or refused by the machine) is logged and left out: the actor host refuses to load
   * such a pact, so the read model keeps its last good record.
   */
  private async replay(entries: (JournalEntry | undefined)[]): Promise<{ pact: Pact; entry: JournalEntry }[]> {
    const latest = new Map<string, Pact | undefined>();
    const applied: { pact: Pact; entry: JournalEntry }[] = [];
    for (const entry of entries) {
      if (!entry) {
        console.error('projector skips a journal message that is not an entry of its subject’s pact');
        continue;
      }
      const previous = latest.has(entry.pactId) ? latest.get(entry.pactId) : await this.recordOf(entry.pactId);
      try {
        const pact = applyEntry(previous, entry);
        latest.set(entry.pactId, pact);
        applied.push({ pact, entry });
      } catch (error) {
        console.error('projector skips a journal entry it cannot replay:', String(error));
      }
    }
    return applied;
  }

  private async recordOf(pactId: string): Promise<Pact | undefined> {
    return this.recent.get(pactId) ?? (await this.readModel.get(pactId));
  }

  private remember(pact: Pact): void {
    this.recent.delete(pact.id);
    this.recent.set(pact.id, pact);
    if (this.recent.size > RECENT_RECORDS) this.recent.delete(this.recent.keys().next().value as string);
  }

  private releaseWaiters(): void {
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!;
      if (waiter.seq <= this.position) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}
