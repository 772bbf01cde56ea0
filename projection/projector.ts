import { DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { decodeEntry, type JournalEntry } from '../actors/journal.js';
import type { Nats } from '../actors/nats.js';
import { JOURNAL_STREAM } from '../actors/subjects.js';
import type { ReadModel } from './read-model.js';

type Listener = (entry: JournalEntry) => void;

/**
 * Follows the journal into the read model. A reader that just wrote waits for `reached(seq)`
 * before answering, so a client always reads its own writes.
 */
export class Projector {
  private position = 0;
  private messages: ConsumerMessages | undefined;
  private readonly waiters: { seq: number; resolve: () => void }[] = [];
  private readonly listeners: Listener[] = [];

  constructor(
    private readonly nats: Nats,
    private readonly readModel: ReadModel,
  ) {}

  onEntry(listener: Listener): void {
    this.listeners.push(listener);
  }

  /** Catches up with everything journaled so far, then keeps following. */
  async start(): Promise<void> {
    this.position = await this.readModel.checkpoint();
    const info = await this.nats.jsm.streams.info(JOURNAL_STREAM);
    const target = info.state.last_seq;
    const consumer = await this.nats.js.consumers.get(JOURNAL_STREAM, {
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: this.position + 1,
    });
    this.messages = await consumer.consume();
    void (async () => {
      for await (const message of this.messages!) await this.project(message.seq, decodeEntry(message.data));
    })();
    await this.reached(target);
  }

  async stop(): Promise<void> {
    await this.messages?.close();
  }

  get seq(): number {
    return this.position;
  }

  /** Resolves once the read model holds journal position `seq`. */
  reached(seq: number): Promise<void> {
    if (seq <= this.position) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  private async project(seq: number, entry: JournalEntry): Promise<void> {
    if (seq <= this.position) return;
    await this.readModel.put(entry.pact, seq);
    this.position = seq;
    for (const listener of this.listeners) listener(entry);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!;
      if (waiter.seq <= seq) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}
