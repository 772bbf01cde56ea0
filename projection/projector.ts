import { AckPolicy, DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { decodeEntry, recentAfter, type JournalEntry } from '../actors/journal.js';
import { PULL, type Nats } from '../actors/nats.js';
import { applyEntry } from '../actors/replay.js';
import { JOURNAL_STREAM, JOURNAL_WILDCARD, pactIdOfJournalSubject } from '../actors/subjects.js';
import type { Pact } from '../machines/pact/types.js';
import type { Head, PactRecord, ReadModel } from './read-model.js';

type Listener = (pact: Pact) => void;

/** An entry this node's actor host appended, with the record it leads to: the projector's fast path. */
export interface Committed {
  entry: JournalEntry;
  /** The stream sequence of the pact's entry before this one; 0 for its first. */
  previousSeq: number;
  record: PactRecord;
}

/** What reaches the projector: a commit of this node's host, or a journal message (anyone's, in stream order). */
type Arrival = { committed: Committed } | { seq: number; subject: string; data: Uint8Array };

const DAY_NS = 86_400 * 1e9;
const RETRY_MS = 1_000;
const RECENT_RECORDS = 1_024;

/**
 * Keeps the read model: each pact's newest record, written in batches. Two ways in:
 *
 * - `committed`: what this node's actor host just appended. Readers see it at once (the read model
 *   remembers it until it is on disk), and it is written without decoding anything.
 * - the journal, through a durable consumer, in stream order: other hosts' entries, and after a crash
 *   whatever was appended but never written here. An entry whose record is already written (this node
 *   committed it) is skipped by its sequence alone.
 *
 * A commit is written only on top of the record of the pact's previous entry; when the read model does
 * not hold that yet (another host wrote it), the commit waits for the journal to bring both in order.
 */
export class Projector {
  private position = 0;
  private messages: ConsumerMessages | undefined;
  private readonly waiters: { seq: number; resolve: () => void }[] = [];
  private readonly listeners: Listener[] = [];
  private arrivals: Arrival[] = [];
  /** Arrivals taken and written so far: a reader that must see everything arrived waits on these. */
  private arrivedCount = 0;
  private writtenCount = 0;
  private readonly drainWaiters: { count: number; resolve: () => void }[] = [];
  /** The newest records written, so that the next entry of a busy pact needs no read. */
  private readonly written = new Map<string, PactRecord>();
  /** Pacts with a journal entry the machine refuses: their record is the last good one, not the journal's. */
  private readonly unreplayable = new Set<string>();
  private writing: Promise<void> | undefined;
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

  /** The journal position up to which every entry is in the read model. */
  get reachedSeq(): number {
    return this.position;
  }

  onEntry(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * Whether the read model holds every entry of `pactId` up to journal position `seq`, and has replayed
   * them all (a pact with an entry the machine refuses never counts as held).
   */
  holdsAllOf(pactId: string, seq: number): boolean {
    return this.position >= seq && !this.unreplayable.has(pactId);
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
      for await (const message of this.messages!) {
        if (message.seq > this.position) this.arrive({ seq: message.seq, subject: message.subject, data: message.data });
      }
    })();
    await this.reached(target);
  }

  /** Stops following the journal once what arrived is written (what is not, the journal brings back). */
  async stop(): Promise<void> {
    await this.messages?.close();
    await this.writing;
    this.stopped = true;
  }

  /** Takes what this node's host appended: readable at once, written with the next batch. */
  committed(committed: Committed): void {
    this.readModel.remember(committed.record);
    this.arrive({ committed });
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

  /**
   * Resolves once everything that arrived before the call is written (kept figures such as state counts
   * then include this node's latest commits), or after `timeoutMs`.
   */
  allWritten(timeoutMs: number): Promise<void> {
    if (this.writtenCount >= this.arrivedCount) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.drainWaiters.push({ count: this.arrivedCount, resolve: () => (clearTimeout(timer), resolve()) });
    });
  }

  private arrive(arrival: Arrival): void {
    this.arrivedCount++;
    this.arrivals.push(arrival);
    this.writing ??= this.writeArrivals().finally(() => (this.writing = undefined));
  }

  /** Writes what arrived while the previous batch was being written, as one batch. */
  private async writeArrivals(): Promise<void> {
    while (this.arrivals.length > 0 && !this.stopped) {
      const batch = this.arrivals;
      this.arrivals = [];
      let records: PactRecord[];
      let position: number;
      try {
        ({ records, position } = await this.recordsOf(batch));
        await this.readModel.putAll(records, position);
      } catch (error) {
        // Never move past an entry that is not written: put the batch back and try again shortly.
        console.error('projector could not write; retrying in a second:', String(error));
        this.written.clear();
        this.arrivals = [...batch, ...this.arrivals];
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      this.position = position;
      this.writtenCount += batch.length;
      for (const record of records) {
        this.remember(record);
        for (const listener of this.listeners) listener(record.pact);
      }
      this.releaseWaiters();
    }
  }

  /** The newest record of each pact the batch moves, and the journal position it reaches. */
  private async recordsOf(batch: Arrival[]): Promise<{ records: PactRecord[]; position: number }> {
    const latest = new Map<string, PactRecord>();
    const heads = await this.headsOf(batch);
    const headSeq = (pactId: string) => latest.get(pactId)?.seq ?? heads.get(pactId)?.seq ?? 0;
    let position = this.position;
    for (const arrival of batch) {
      if ('committed' in arrival) {
        const { record, previousSeq } = arrival.committed;
        if (headSeq(record.pact.id) === previousSeq) latest.set(record.pact.id, record);
        continue;
      }
      position = arrival.seq;
      const pactId = pactIdOfJournalSubject(arrival.subject);
      if (pactId === undefined || headSeq(pactId) >= arrival.seq) continue; // not a pact's, or written already
      const record = await this.replay(pactId, arrival, latest.get(pactId));
      if (record) latest.set(pactId, record);
    }
    return { records: [...latest.values()], position };
  }

  /**
   * The record a journal message leads to, replayed on the pact's previous record. A message that is not
   * an entry, or one the machine refuses, is logged and left out: the pact keeps its last good record
   * and never counts as held (`holdsAllOf`), so its actor reads the journal, which refuses it.
   */
  private async replay(pactId: string, message: { seq: number; subject: string; data: Uint8Array }, inBatch: PactRecord | undefined) {
    const entry = decodeEntry(message.data, message.subject);
    if (!entry) {
      console.error(`projector skips journal message ${message.seq}: not an entry of its subject’s pact`);
      this.unreplayable.add(pactId);
      return undefined;
    }
    const previous = inBatch ?? this.written.get(pactId) ?? (await this.readModel.storedRecord(pactId));
    try {
      const pact = applyEntry(previous?.pact, entry);
      const recentCommands = recentAfter(previous?.recentCommands ?? [], entry.commandId);
      return { pact, text: JSON.stringify(pact), seq: message.seq, recentCommands };
    } catch (error) {
      console.error('projector skips a journal entry it cannot replay:', String(error));
      this.unreplayable.add(pactId);
      return undefined;
    }
  }

  /** The written heads of the pacts a batch names: from memory when recently written, else from disk. */
  private async headsOf(batch: Arrival[]): Promise<Map<string, Head | undefined>> {
    const ids = new Set<string>();
    for (const arrival of batch) {
      const pactId = 'committed' in arrival ? arrival.committed.record.pact.id : pactIdOfJournalSubject(arrival.subject);
      if (pactId !== undefined) ids.add(pactId);
    }
    const heads = new Map<string, Head | undefined>();
    const unknown: string[] = [];
    for (const id of ids) {
      const written = this.written.get(id);
      if (written) heads.set(id, written);
      else unknown.push(id);
    }
    const stored = await this.readModel.storedHeads(unknown);
    unknown.forEach((id, i) => heads.set(id, stored[i]));
    return heads;
  }

  private remember(record: PactRecord): void {
    this.written.delete(record.pact.id);
    this.written.set(record.pact.id, record);
    if (this.written.size > RECENT_RECORDS) this.written.delete(this.written.keys().next().value as string);
  }

  private releaseWaiters(): void {
    for (let i = this.drainWaiters.length - 1; i >= 0; i--) {
      if (this.drainWaiters[i]!.count > this.writtenCount) continue;
      this.drainWaiters.splice(i, 1)[0]!.resolve();
    }
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      const waiter = this.waiters[i]!;
      if (waiter.seq <= this.position) {
        this.waiters.splice(i, 1);
        waiter.resolve();
      }
    }
  }
}
