import type { AbstractBatchOperation } from 'abstract-level';
import { BoundedMap } from '../storage/bounded-map.js';
import { inChunks } from '../storage/chunked-reads.js';
import type { JsonLevel } from '../storage/level.js';
import { pad } from '../projection/time-pages.js';
import type { Received, StreamEvent } from './event.js';
import { facetsOf, readRecord, recordOf, type StoredEvent } from './event-record.js';

export const HOUR_MS = 3_600_000;
/** As long as the JetStream stream keeps an event: the longest an event may live. */
const RETENTION_MS = 7 * 24 * HOUR_MS;

/** Events a publisher may have kept per hour, and who is not held to it. */
export interface Quota {
  perHour: number;
  exempt: string;
}
const RECENT_IDS = 20_000;
const RECENT_HOURS = 50_000;
const seqKey = (seq: number) => pad(seq);
/** When an event was taken, then its sequence key: the events taken before a time are one range. */
const timeKeyOf = (receivedAt: number, seq: string) => `${pad(receivedAt)}!${seq}`;
const seqOfTimeKey = (timeKey: string) => timeKey.slice(pad(0).length + 1);
const hourOf = (ms: number) => Math.floor(ms / HOUR_MS);
/** Hour first, so that hours past the retention are one range to delete. */
const hourKeyOf = (publisher: string, at: number) => `${pad(hourOf(at))}!${publisher}`;
/** The store's key layout: a store of another layout is rebuilt from the stream at start. */
const LAYOUT = 4;
/**
 * Sublevels of earlier layouts, emptied when the store is rebuilt: layout 2 kept texts and facets apart,
 * layout 3 named the records' sublevel so that it sorted among the others.
 */
const RETIRED_SUBLEVELS = ['events', 'event-facets', 'event-records'];
/**
 * The records' sublevel, named to sort before every other of the node's LevelDB (`deadlines` is the next):
 * a table of new writes then holds newer records and keys above them, so an old record is mostly not in its
 * range (deletions, a sweep's or a rebuild's, are the exception). Not told apart from the noise in the bench.
 */
export const RECORDS_SUBLEVEL = 'agent-stream-records';
/**
 * What one call of a records iterator may hand back (classic-level's default is 16 KiB): with records of a
 * few hundred bytes, 16 KiB cut a chunk of 1,000 into some forty calls, each a hand-off to libuv's pool.
 */
const ITERATOR_BYTES = 256 * 1024;
/** Events a sweep reads and deletes at once (their records are held meanwhile, each up to tens of KiB). */
const SWEEP_BATCH = 100;

/**
 * The node's copy of the Agent Stream in LevelDB, built only from its JetStream stream: each event's record
 * (its facets and text, `event-record.ts`) by stream sequence, its id, the time it was taken, and how many
 * events each publisher had taken in each hour (the publish quota, and `maxPerPublisherPerHour`).
 */
export class EventStore {
  private readonly records;
  private readonly ids;
  private readonly times;
  private readonly hours;
  private readonly meta;
  /** All but `meta`, which says which store this is. */
  private readonly data;
  /** In-memory copies of the newest `ids` and `hours` entries: what publishing asks about most. */
  private readonly recentIds = new BoundedMap<string, number>(RECENT_IDS);
  private readonly recentHours = new BoundedMap<string, number>(RECENT_HOURS);
  /**
   * The stream position the store has read to (what `checkpoint` resolves to), known in memory once open:
   * `putAll` moves both, so this instance must be the only one writing its LevelDB (the node's event
   * projector's). A pull reads no further than it.
   */
  private position = 0;

  constructor(private readonly level: JsonLevel) {
    this.records = level.sublevel<string, string>(RECORDS_SUBLEVEL, { valueEncoding: 'utf8' });
    this.ids = level.sublevel<string, number>('event-ids', { valueEncoding: 'json' });
    this.times = level.sublevel<string, string>('event-times', { valueEncoding: 'utf8' });
    this.hours = level.sublevel<string, number>('event-hours', { valueEncoding: 'json' });
    this.meta = level.sublevel<string, unknown>('event-meta', { valueEncoding: 'json' });
    this.data = [this.records, this.ids, this.times, this.hours];
  }

  /**
   * Opens the store; clears one built from another stream (made anew, or another NATS) or in another layout.
   * A store of the same stream in another layout keeps how far the pact journal was notified: those
   * notifications are in the stream it is rebuilt from. What says which store this is changes last, in one
   * batch, so a start that dies while clearing leaves a store the next start clears again.
   */
  async open(streamCreated: string): Promise<void> {
    await Promise.all([...this.data, this.meta].map((sublevel) => sublevel.open())); // before any synchronous read
    const made = `${streamCreated} layout ${LAYOUT}`;
    const stored = (await this.meta.get('stream')) as string | undefined;
    if (stored !== made) {
      // layout 1 kept the bare creation time
      const sameStream = stored === streamCreated || stored?.startsWith(`${streamCreated} layout `);
      for (const sublevel of this.data) await sublevel.clear();
      for (const name of RETIRED_SUBLEVELS) await this.level.sublevel(name).clear();
      this.recentIds.clear();
      this.recentHours.clear();
      await this.meta.batch([
        { type: 'del', key: 'streamSeq' },
        ...(sameStream ? [] : [{ type: 'del' as const, key: 'notifiedSeq' }]),
        { type: 'put', key: 'stream', value: made },
      ]);
    }
    this.position = await this.checkpoint();
  }

  async checkpoint(): Promise<number> {
    return ((await this.meta.get('streamSeq')) as number | undefined) ?? 0;
  }

  /** How far the pact journal was read for notifications (`stream/pact-notifier.ts`). */
  async notifiedUpTo(): Promise<number> {
    return ((await this.meta.get('notifiedSeq')) as number | undefined) ?? 0;
  }

  notified(journalSeq: number): Promise<void> {
    return this.meta.put('notifiedSeq', journalSeq);
  }

  /**
   * The stream sequence of the event with this id, if the store holds it. Read synchronously, as are the
   * hourly counts: every publish asks about an id the store does not hold, which LevelDB answers from its
   * memtable and bloom filters in microseconds, where an asynchronous read costs tens of them on the main thread.
   */
  seqOf(eventId: string): number | undefined {
    return this.recentIds.get(eventId) ?? this.ids.getSync(eventId);
  }

  /** How many events of `publisher` the store took in the hour of `at`. */
  takenInHour(publisher: string, at: number): number {
    return this.hourCount(hourKeyOf(publisher, at)) ?? 0;
  }

  private hourCount(hourKey: string): number | undefined {
    return this.recentHours.get(hourKey) ?? this.hours.getSync(hourKey);
  }

  /**
   * Stores the events of a batch (ids new to the store) and the stream position reached, in one batch. The
   * quota is applied here, in stream order, so every node keeps the same events: one past its publisher's
   * `quota.perHour` in its hour is not kept (but for `quota.exempt`, the server's notifications).
   */
  async putAll(events: { seq: number; received: Received; text: string }[], position: number, quota: Quota): Promise<void> {
    const counts = new Map<string, number>();
    const kept: typeof events = [];
    const operations: AbstractBatchOperation<JsonLevel, string, unknown>[] = [];
    for (const { seq, received, text } of events) {
      const hourKey = hourKeyOf(received.event.publisher, received.receivedAt);
      const ordinal = (counts.get(hourKey) ?? this.hourCount(hourKey) ?? 0) + 1;
      if (ordinal > quota.perHour && received.event.publisher !== quota.exempt) continue;
      counts.set(hourKey, ordinal);
      kept.push({ seq, received, text });
      operations.push({ type: 'put', key: seqKey(seq), value: recordOf(facetsOf(received, ordinal), text), sublevel: this.records });
      operations.push({ type: 'put', key: received.event.id, value: seq, sublevel: this.ids });
      operations.push({ type: 'put', key: timeKeyOf(received.receivedAt, seqKey(seq)), value: '', sublevel: this.times });
    }
    for (const [key, count] of counts) operations.push({ type: 'put', key, value: count, sublevel: this.hours });
    operations.push({ type: 'put', key: 'streamSeq', value: position, sublevel: this.meta });
    await this.level.batch(operations as never);
    this.position = Math.max(this.position, position);
    for (const [key, count] of counts) this.recentHours.set(key, count);
    for (const { seq, received } of kept) this.recentIds.set(received.event.id, seq);
  }

  /**
   * The events after stream sequence `after`, in order, at most `count`, read as they are asked for in
   * chunks. The first, of at most `firstChunk`, is read key by key while the sequences follow on without a
   * gap (a synchronous read from LevelDB's caches costs a few microseconds, an asynchronous one tens on the
   * main thread, for the hand-off to libuv's pool). Past a gap, or past a full first chunk, an iterator seeks
   * on (`inChunks`: `firstChunk` entries, then twice as many each time, up to 1,000, each call at most
   * ITERATOR_BYTES). The first chunk also ends with the event that brings its text to `textBound`. A pull
   * that fills its page at once reads little more than its page.
   */
  async *eventChunks(after: number, count: number, firstChunk: number, textBound: number): AsyncGenerator<StoredEvent[]> {
    const run = this.eventsFollowing(after, Math.min(count, firstChunk), textBound);
    if (run.length > 0) yield run;
    const last = run.at(-1)?.seq ?? after;
    if (last >= this.position || run.length === count) return;
    const options = { gt: seqKey(last), limit: count - run.length, highWaterMarkBytes: ITERATOR_BYTES }; // the last is classic-level's, passed on by the sublevel
    const rest = this.records.iterator(options);
    for await (const entries of inChunks(rest, firstChunk)) yield entries.map(([key, record]) => ({ seq: Number(key), ...readRecord(record) }));
  }

  /**
   * The events at `after + 1`, `after + 2`, … up to the first not stored or the position, at most `most`,
   * ending with the one that brings their text to `textBound`.
   */
  private eventsFollowing(after: number, most: number, textBound: number): StoredEvent[] {
    const run: StoredEvent[] = [];
    let text = 0;
    for (let seq = after + 1; run.length < most && text < textBound && seq <= this.position; seq++) {
      const record = this.records.getSync(seqKey(seq));
      if (record === undefined) break;
      const event = { seq, ...readRecord(record) };
      run.push(event);
      text += event.text.length;
    }
    return run;
  }

  /**
   * Forgets the events taken more than seven days before `now`, as the stream's maximum age drops them
   * from NATS, and their hours' counts; resolves to how many events.
   */
  async sweep(now: number, batchSize = SWEEP_BATCH): Promise<number> {
    let swept = 0;
    for (;;) {
      const keys = await this.times.keys({ lt: `${pad(now - RETENTION_MS)}!`, limit: batchSize }).all();
      if (keys.length === 0) break;
      const seqs = keys.map(seqOfTimeKey);
      const records = await this.records.getMany(seqs);
      await this.forget(keys.map((timeKey, i) => ({ seq: seqs[i]!, timeKey, text: records[i] === undefined ? undefined : readRecord(records[i]!).text })));
      swept += keys.length;
    }
    await this.sweepHours(now);
    return swept;
  }

  /**
   * Forgets the events before stream sequence `firstSeq`: what the stream itself no longer holds (its byte
   * limit dropped its oldest); resolves to how many.
   */
  async sweepBefore(firstSeq: number, batchSize = SWEEP_BATCH): Promise<number> {
    let swept = 0;
    for (;;) {
      const entries = await this.records.iterator({ lt: seqKey(firstSeq), limit: batchSize }).all();
      if (entries.length === 0) return swept;
      await this.forget(entries.map(([seq, record]) => {
        const { facets, text } = readRecord(record);
        return { seq, timeKey: timeKeyOf(facets.receivedAt, seq), text };
      }));
      swept += entries.length;
    }
  }

  /** Deletes events (by their sequence keys, with their texts as read) with their time keys and ids, in one batch. */
  private async forget(events: { seq: string; timeKey: string; text: string | undefined }[]): Promise<void> {
    const ids = events.flatMap(({ text }) => (text === undefined ? [] : [(JSON.parse(text) as StreamEvent).id]));
    await this.level.batch([
      ...events.flatMap(({ seq, timeKey }) => [
        { type: 'del' as const, key: timeKey, sublevel: this.times },
        { type: 'del' as const, key: seq, sublevel: this.records },
      ]),
      ...ids.map((id) => ({ type: 'del' as const, key: id, sublevel: this.ids })),
    ] as never);
    for (const id of ids) this.recentIds.delete(id);
  }

  /** Forgets the hourly counts of hours that ended more than seven days before `now`. */
  private async sweepHours(now: number): Promise<void> {
    const before = `${pad(hourOf(now - RETENTION_MS))}!`;
    await this.hours.clear({ lt: before });
    for (const key of this.recentHours.keys()) if (key < before) this.recentHours.delete(key);
  }

  /** The sequence just before the first event taken at or after `at` (what `start: { since }` begins after). */
  async seqBefore(at: number): Promise<number> {
    const [key] = await this.times.keys({ gte: `${pad(at)}!`, limit: 1 }).all();
    return key === undefined ? await this.checkpoint() : Number(seqOfTimeKey(key)) - 1;
  }
}
