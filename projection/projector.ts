import { decodeEntry, recentAfter, type JournalEntry } from '../actors/journal.js';
import type { Nats } from '../actors/nats.js';
import { applyEntry } from '../actors/replay.js';
import { JOURNAL_STREAM, pactIdOfJournalSubject } from '../actors/subjects.js';
import { JournalFollower, MAX_BACKLOG, type JournalMessage } from './journal-follower.js';
import { PositionWaiters } from './position-waiters.js';
import { tellEach } from './listeners.js';
import { MessageTap } from './tapped-follower.js';
import type { Pact } from '../machines/pact/types.js';
import { recordOfStored, type PactRecord, type ReadModel, type StoredRecord } from './read-model.js';

type Listener = (pact: Pact) => void;

/** An entry this node's actor host appended, with the record it leads to: the projector's fast path. */
export interface Committed {
  entry: JournalEntry;
  /** The stream sequence of the pact's entry before this one; 0 for its first. */
  previousSeq: number;
  record: PactRecord;
}

/**
 * What reaches the projector: a commit of this node's host, a record an actor read from the journal, or a
 * journal message (anyone's, in stream order).
 */
type Arrival = { committed: Committed } | { recovered: PactRecord } | JournalMessage;
/** The record a commit or a recovery brings. */
const recordOf = (arrival: Exclude<Arrival, JournalMessage>) => ('committed' in arrival ? arrival.committed.record : arrival.recovered);
/** A pact whose written record reaches `seq`. */
type Settled = { pactId: string; seq: number };

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
  private readonly positions = new PositionWaiters();
  private readonly listeners: Listener[] = [];
  private arrivals: Arrival[] = [];
  /** Arrivals taken and written so far: a reader that must see everything arrived waits on these. */
  private arrivedCount = 0;
  private writtenCount = 0;
  private readonly drainWaiters: { count: number; resolve: () => void }[] = [];
  /**
   * The newest records written, so that the next entry of a busy pact needs no read. Changed only between
   * batches: a batch's records are read from here or from disk (`storedOf`), never both.
   */
  private readonly written = new Map<string, PactRecord>();
  /** Pacts with a journal entry the machine refuses (kept in LevelDB): their record is the last good one. */
  private unreplayable = new Set<string>();
  /** Found unreplayable since the last batch; written with the next. */
  private newlyUnreplayable: string[] = [];
  private readonly follower: JournalFollower;
  private writing: Promise<void> | undefined;
  /** A journal follower held back until the batch being written is done. */
  private readonly batchWaiters: (() => void)[] = [];
  private stopped = false;
  /** Every journal message the follower takes, for a reader that needs each entry (the pact notifier). */
  readonly journalTap = new MessageTap();

  /** `nodeId` names this node's consumer: every node keeps its own read model. */
  constructor(
    nats: Nats,
    private readonly readModel: ReadModel,
    nodeId: string,
  ) {
    this.follower = new JournalFollower(nats, JOURNAL_STREAM, `projector-${nodeId}`, (message) => this.fromJournal(message));
  }

  /** The journal position up to which every entry is in the read model. */
  get reachedSeq(): number {
    return this.positions.reachedSeq;
  }

  onEntry(listener: Listener): void {
    this.listeners.push(listener);
  }

  /**
   * Whether the read model's record of `pactId` holds every entry journaled up to `seq` (it has read the
   * journal that far) and all of them replayed (a pact with an entry the machine refuses never counts).
   */
  vouchesFor(pactId: string, seq: number): boolean {
    return this.positions.reachedSeq >= seq && !this.unreplayable.has(pactId);
  }

  /**
   * Catches up with everything journaled so far, then keeps following, from the read model's own position
   * (kept in LevelDB, so the follower needs no acks).
   */
  async start(): Promise<void> {
    const position = await this.readModel.checkpoint();
    this.positions.reach(position);
    this.unreplayable = await this.readModel.unreplayablePacts();
    this.journalTap.from(position);
    const target = await this.follower.start(position);
    await this.reached(target);
  }

  /** Stops following the journal; the batch being written is finished (what is not, the journal brings back). */
  async stop(): Promise<void> {
    this.stopped = true; // first: a follower held back by this receiver is let go
    await this.follower.stop();
    await this.writing;
  }

  /** Takes what this node's host appended: readable at once, written with the next batch. */
  committed(committed: Committed): void {
    this.readModel.remember(committed.record);
    this.arrive({ committed });
  }

  /**
   * Takes a record an actor read from the journal: readable at once; the journal brings its entries here
   * too (then it is written), unless they are written already.
   */
  recovered(record: PactRecord): void {
    this.readModel.remember(record);
    this.arrive({ recovered: record });
  }

  /**
   * Resolves once the read model holds journal position `seq`, or after `timeoutMs` when one is given:
   * then a lagging read model delays answers but never blocks them.
   */
  reached(seq: number, timeoutMs?: number): Promise<void> {
    return this.positions.reached(seq, timeoutMs);
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

  private releaseBatchWaiters(): void {
    for (const resolve of this.batchWaiters.splice(0)) resolve();
  }

  /** A journal message: written with the next batch; a long backlog holds the follower back until written. */
  private fromJournal(message: JournalMessage): Promise<void> | undefined {
    this.journalTap.tell(message);
    this.arrive(message);
    if (this.arrivals.length < MAX_BACKLOG || !this.writing) return undefined;
    // Until the batch being written is done (not until nothing is left: this node's commits keep coming).
    return new Promise((resolve) => this.batchWaiters.push(resolve));
  }

  private arrive(arrival: Arrival): void {
    this.arrivedCount++;
    this.arrivals.push(arrival);
    this.kick();
  }

  /** Starts the write loop unless it runs; what arrives as it ends starts it again. */
  private kick(): void {
    if (this.writing || this.stopped) return;
    this.writing = this.writeArrivals().finally(() => {
      this.writing = undefined;
      this.releaseBatchWaiters();
      if (this.arrivals.length > 0) this.kick();
    });
  }

  /** Writes what arrived while the previous batch was being written, as one batch. */
  private async writeArrivals(): Promise<void> {
    while (this.arrivals.length > 0 && !this.stopped) {
      const batch = this.arrivals;
      this.arrivals = [];
      let records: PactRecord[];
      let position: number;
      let settled: Settled[];
      try {
        ({ records, position, settled } = await this.recordsOf(batch));
        await this.readModel.putAll(records, position, this.newlyUnreplayable);
        this.newlyUnreplayable = [];
      } catch (error) {
        // Never move past an entry that is not written: put the batch back and try again shortly.
        console.error('projector could not write; retrying in a second:', String(error));
        this.written.clear();
        this.arrivals = [...batch, ...this.arrivals];
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      this.positions.reach(position);
      this.writtenCount += batch.length;
      this.releaseBatchWaiters();
      for (const record of records) this.remember(record);
      for (const { pactId, seq } of settled) this.readModel.settle(pactId, seq); // now on disk
      for (const record of records) tellEach(this.listeners, record.pact, `the projector's record of pact ${record.pact.id}`);
      this.releaseWaiters();
    }
  }

  /**
   * The newest record of each pact the batch moves, the journal position it reaches, and the pacts whose
   * commit or recovered record is written by other means (earlier, or by this batch's journal messages).
   */
  private async recordsOf(batch: Arrival[]): Promise<{ records: PactRecord[]; position: number; settled: Settled[] }> {
    const latest = new Map<string, PactRecord>();
    const settled: Settled[] = [];
    const stored = await this.storedOf(batch);
    const headSeq = (pactId: string) => latest.get(pactId)?.seq ?? this.written.get(pactId)?.seq ?? stored.get(pactId)?.head.seq ?? 0;
    let position = this.positions.reachedSeq;
    for (const arrival of batch) {
      if (!('seq' in arrival)) {
        const record = recordOf(arrival);
        const head = headSeq(record.pact.id);
        if ('committed' in arrival && head === arrival.committed.previousSeq) latest.set(record.pact.id, record);
        else if (head >= record.seq) settled.push({ pactId: record.pact.id, seq: head }); // written (or in this batch): nothing waits once it is
        continue; // else the journal brings what the read model lacks, this entry after it
      }
      position = arrival.seq;
      const pactId = pactIdOfJournalSubject(arrival.subject);
      if (pactId === undefined) {
        console.error(`projector skips journal message ${arrival.seq} on ${arrival.subject}: no pact's position`);
        continue;
      }
      if (headSeq(pactId) >= arrival.seq) continue; // written already
      const record = this.replay(pactId, arrival, latest.get(pactId), stored.get(pactId));
      if (record) latest.set(pactId, record);
    }
    return { records: [...latest.values()], position, settled };
  }

  /**
   * The record a journal message leads to, replayed on the pact's previous record. A message that is not
   * an entry, or one the machine refuses, is logged and left out: the pact keeps its last good record
   * and never counts as held (`vouchesFor`), so its actor reads the journal, which refuses it.
   */
  private replay(pactId: string, message: JournalMessage, inBatch: PactRecord | undefined, onDisk: StoredRecord | undefined): PactRecord | undefined {
    const entry = decodeEntry(message.data, message.subject);
    if (!entry) {
      console.error(`projector skips journal message ${message.seq}: not an entry of its subject’s pact`);
      this.markUnreplayable(pactId);
      return undefined;
    }
    const previous = inBatch ?? this.written.get(pactId) ?? (onDisk && recordOfStored(onDisk));
    try {
      const pact = applyEntry(previous?.pact, entry);
      const recentCommands = recentAfter(previous?.recentCommands ?? [], entry.commandId);
      return { pact, text: JSON.stringify(pact), seq: message.seq, recentCommands };
    } catch (error) {
      console.error('projector skips a journal entry it cannot replay:', String(error));
      this.markUnreplayable(pactId);
      return undefined;
    }
  }

  private markUnreplayable(pactId: string): void {
    if (this.unreplayable.has(pactId)) return;
    this.unreplayable.add(pactId);
    this.newlyUnreplayable.push(pactId);
  }

  /** The stored records of the pacts a batch names but for those recently written (in memory): one read. */
  private async storedOf(batch: Arrival[]): Promise<Map<string, StoredRecord | undefined>> {
    const unknown = new Set<string>();
    for (const arrival of batch) {
      const pactId = 'seq' in arrival ? pactIdOfJournalSubject(arrival.subject) : recordOf(arrival).pact.id;
      if (pactId !== undefined && !this.written.has(pactId)) unknown.add(pactId);
    }
    const ids = [...unknown];
    const stored = await this.readModel.storedRecords(ids);
    return new Map(ids.map((id, i) => [id, stored[i]]));
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
  }
}
