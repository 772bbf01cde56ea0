import { AckPolicy, DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { decodeEntry, journalMessage, recentAfter, type JournalEntry } from '../actors/journal.js';
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

/**
 * What reaches the projector: a commit of this node's host, a record an actor read from the journal, or a
 * journal message (anyone's, in stream order).
 */
type Arrival = { committed: Committed } | { recovered: PactRecord } | JournalMessage;
type JournalMessage = { seq: number; subject: string; data: Uint8Array };
/** The record a commit or a recovery brings. */
const recordOf = (arrival: Exclude<Arrival, JournalMessage>) => ('committed' in arrival ? arrival.committed.record : arrival.recovered);
/** A pact whose written record reaches `seq`. */
type Settled = { pactId: string; seq: number };

const DAY_NS = 86_400 * 1e9;
const RETRY_MS = 1_000;
const RECENT_RECORDS = 1_024;
/** How often, with nothing delivered, the projector asks whether the journal grew past what it got. */
const TAIL_CHECK_MS = 2_000;

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
  /** Pacts with a journal entry the machine refuses (kept in LevelDB): their record is the last good one. */
  private unreplayable = new Set<string>();
  /** Found unreplayable since the last batch; written with the next. */
  private newlyUnreplayable: string[] = [];
  /** The last journal sequence handed to the write loop, and when. */
  private lastArrived = 0;
  private lastArrivedAt = Date.now();
  /** Journal messages are taken one at a time, so that a gap is filled before what follows it. */
  private following: Promise<void> = Promise.resolve();
  private tailChecker: NodeJS.Timeout | undefined;
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
   * Whether the read model's record of `pactId` holds every entry journaled up to `seq` (it has read the
   * journal that far) and all of them replayed (a pact with an entry the machine refuses never counts).
   */
  vouchesFor(pactId: string, seq: number): boolean {
    return this.position >= seq && !this.unreplayable.has(pactId);
  }

  /**
   * Catches up with everything journaled so far, then keeps following. The consumer is a durable one
   * (replicated with the stream, so it outlives a NATS node), made anew at each start from the read
   * model's own position; the position lives in LevelDB, so no acks are needed. A message the consumer
   * never delivers (in flight when a connection dropped) is not skipped: the journal's sequences have no
   * holes, so a gap, or a journal that grew while nothing came, is filled by reading those messages.
   */
  async start(): Promise<void> {
    this.position = await this.readModel.checkpoint();
    this.lastArrived = this.position;
    this.unreplayable = await this.readModel.unreplayablePacts();
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
        await this.follow(() => this.fromJournal({ seq: message.seq, subject: message.subject, data: message.data }));
      }
    })();
    this.tailChecker = setInterval(() => void this.follow(() => this.checkTail()), TAIL_CHECK_MS);
    await this.reached(target);
  }

  /** Stops following the journal; the batch being written is finished (what is not, the journal brings back). */
  async stop(): Promise<void> {
    clearInterval(this.tailChecker);
    await this.messages?.close();
    this.stopped = true;
    await this.writing;
  }

  private follow(step: () => Promise<void>): Promise<void> {
    this.following = this.following.then(step).catch((error) => console.error('projector could not read the journal:', String(error)));
    return this.following;
  }

  private async fromJournal(message: JournalMessage): Promise<void> {
    if (message.seq <= this.lastArrived) return;
    if (message.seq > this.lastArrived + 1) await this.fillTo(message.seq - 1);
    this.arriveFromJournal(message);
  }

  /** Reads the journal messages after the last one that arrived, up to `seq` (a sequence with none is passed). */
  private async fillTo(seq: number): Promise<void> {
    console.error(`projector reads journal messages ${this.lastArrived + 1}..${seq}, which its consumer did not deliver`);
    while (this.lastArrived < seq && !this.stopped) {
      const next = this.lastArrived + 1;
      const message = await journalMessage(this.nats.jsm, { seq: next });
      if (message) this.arriveFromJournal({ seq: next, subject: message.subject, data: message.data });
      else this.lastArrived = next;
    }
  }

  /** Nothing delivered for a while, yet the journal is longer than what arrived: fetch the rest. */
  private async checkTail(): Promise<void> {
    if (Date.now() - this.lastArrivedAt < TAIL_CHECK_MS) return;
    const last = (await this.nats.jsm.streams.info(JOURNAL_STREAM)).state.last_seq;
    if (last > this.lastArrived) await this.fillTo(last);
  }

  private arriveFromJournal(message: JournalMessage): void {
    this.lastArrived = message.seq;
    this.lastArrivedAt = Date.now();
    this.arrive(message);
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
    this.kick();
  }

  /** Starts the write loop unless it runs; what arrives as it ends starts it again. */
  private kick(): void {
    if (this.writing || this.stopped) return;
    this.writing = this.writeArrivals().finally(() => {
      this.writing = undefined;
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
      this.position = position;
      this.writtenCount += batch.length;
      for (const record of records) this.remember(record);
      for (const { pactId, seq } of settled) this.readModel.settle(pactId, seq); // now on disk
      for (const record of records) for (const listener of this.listeners) listener(record.pact);
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
    const heads = await this.headsOf(batch);
    const headSeq = (pactId: string) => latest.get(pactId)?.seq ?? heads.get(pactId)?.seq ?? 0;
    let position = this.position;
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
      if (pactId === undefined || headSeq(pactId) >= arrival.seq) continue; // not a pact's, or written already
      const record = await this.replay(pactId, arrival, latest.get(pactId));
      if (record) latest.set(pactId, record);
    }
    return { records: [...latest.values()], position, settled };
  }

  /**
   * The record a journal message leads to, replayed on the pact's previous record. A message that is not
   * an entry, or one the machine refuses, is logged and left out: the pact keeps its last good record
   * and never counts as held (`vouchesFor`), so its actor reads the journal, which refuses it.
   */
  private async replay(pactId: string, message: JournalMessage, inBatch: PactRecord | undefined) {
    const entry = decodeEntry(message.data, message.subject);
    if (!entry) {
      console.error(`projector skips journal message ${message.seq}: not an entry of its subject’s pact`);
      this.markUnreplayable(pactId);
      return undefined;
    }
    const previous = inBatch ?? this.written.get(pactId) ?? (await this.readModel.storedRecord(pactId));
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

  /** The written heads of the pacts a batch names: from memory when recently written, else from disk. */
  private async headsOf(batch: Arrival[]): Promise<Map<string, Head | undefined>> {
    const ids = new Set<string>();
    for (const arrival of batch) {
      const pactId = 'seq' in arrival ? pactIdOfJournalSubject(arrival.subject) : recordOf(arrival).pact.id;
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
