import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { publicEvent } from '../../client/stream.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { EventStore } from '../../stream/event-store.js';
import { pullPage, SCAN_BOUND, SCAN_TEXT_BOUND, seqOfCursor, type PullFilter } from '../../stream/pull.js';
import { freshEventStoreEach, type EventStoreContext } from '../support/event-store.js';

// A pull's page on a real LevelDB event store: what it returns, where its cursor stands and what `hasMore`
// says, at the page's and the scan bound's edges (the store is read in chunks, not event by event).

const test = suite<EventStoreContext>('pull page');
const T0 = 1_800_000_000_000;
const server = generateKeyPair();
const quota = { perHour: 1, exempt: server.party };
const inChannel = (channel: string) => ({ received: { receivedAt: T0, event: publicEvent(server, { kind: 'k', channel, body: {} }, T0) } });
const [a, b] = [inChannel('a'), inChannel('b')];
const onlyA: PullFilter = { public: { channels: ['a'] } };
const noReputations = async () => new Map<string, number>();

freshEventStoreEach(test);

/** Stores events at sequences 1..channels.length, each in its channel; an event's text names its sequence. */
const fill = (store: EventStore, channels: ('a' | 'b')[]) => putAt(store, channels.map((_, i) => i + 1), channels);

/** Stores events in channel `a` (or as `channels` says) at `seqs`, the stream read to the last of them. */
async function putAt(store: EventStore, seqs: number[], channels: ('a' | 'b')[] = seqs.map(() => 'a')): Promise<void> {
  const events = seqs.map((seq, i) => ({ seq, ...(channels[i] === 'a' ? a : b), text: `${seq}` }));
  await store.putAll(events, seqs.at(-1)!, quota);
}

async function pull(store: EventStore, after: number, limit: number, filter: PullFilter = {}) {
  const page = await pullPage(store, after, limit, filter, T0, noReputations);
  return { seqs: page.events.map(Number), reached: seqOfCursor(page.nextCursor), hasMore: page.hasMore };
}

const times = (n: number, channel: 'a' | 'b') => Array<'a' | 'b'>(n).fill(channel);

test('a full page says more when an event follows it, and not when it is the last', async ({ store }) => {
  await fill(store, times(51, 'a'));
  assert.equal(await pull(store, 0, 50), { seqs: Array.from({ length: 50 }, (_, i) => i + 1), reached: 50, hasMore: true });
  assert.equal(await pull(store, 50, 50), { seqs: [51], reached: 51, hasMore: false });
  assert.equal(await pull(store, 1, 50), { seqs: Array.from({ length: 50 }, (_, i) => i + 2), reached: 51, hasMore: false });
  assert.equal(await pull(store, 51, 50), { seqs: [], reached: 51, hasMore: false });
});

test('a selective filter finds its events across chunks, up to the page', async ({ store }) => {
  await fill(store, Array.from({ length: 900 }, (_, i) => ((i + 1) % 100 === 0 ? 'a' : 'b')));
  assert.equal(await pull(store, 0, 50, onlyA), { seqs: [100, 200, 300, 400, 500, 600, 700, 800, 900], reached: 900, hasMore: false });
  assert.equal(await pull(store, 0, 3, onlyA), { seqs: [100, 200, 300], reached: 300, hasMore: true });
});

test(`the scan stops at ${SCAN_BOUND} events read, and says more when an event lies past them`, async ({ store }) => {
  await fill(store, [...times(SCAN_BOUND, 'b'), 'a']);
  assert.equal(await pull(store, 0, 50, onlyA), { seqs: [], reached: SCAN_BOUND, hasMore: true });
  assert.equal(await pull(store, SCAN_BOUND, 50, onlyA), { seqs: [SCAN_BOUND + 1], reached: SCAN_BOUND + 1, hasMore: false });
  assert.equal(await pull(store, 1, 50, onlyA), { seqs: [SCAN_BOUND + 1], reached: SCAN_BOUND + 1, hasMore: false }, 'the bound reached at the last event stored');
  assert.equal(await pull(store, 1, 50, { public: { channels: ['none'] } }), { seqs: [], reached: SCAN_BOUND + 1, hasMore: false });
});

test(`a page filled by the ${SCAN_BOUND}th event read says more only when an event follows`, async ({ store }) => {
  await fill(store, [...times(SCAN_BOUND - 1, 'b'), 'a']);
  assert.equal(await pull(store, 0, 1, onlyA), { seqs: [SCAN_BOUND], reached: SCAN_BOUND, hasMore: false });
  await fill(store, [...times(SCAN_BOUND - 1, 'b'), 'a', 'b']);
  assert.equal(await pull(store, 0, 1, onlyA), { seqs: [SCAN_BOUND], reached: SCAN_BOUND, hasMore: true });
});

test('gaps in the stored sequences (events not kept, or forgotten) are read past', async ({ level, store }) => {
  const kept = [3, 4, 5, 9, 10, 40, 41];
  await putAt(store, kept);
  assert.equal(await pull(store, 0, 50), { seqs: kept, reached: 41, hasMore: false });
  assert.equal(await pull(store, 5, 2), { seqs: [9, 10], reached: 10, hasMore: true });
  assert.equal(await pull(store, 10, 50), { seqs: [40, 41], reached: 41, hasMore: false });
  const reopened = new EventStore(level);
  await reopened.open('stream made at T0');
  assert.equal(await pull(reopened, 4, 50), { seqs: [5, 9, 10, 40, 41], reached: 41, hasMore: false }, 'a store opened again knows how far it read');
  await putAt(reopened, [42, 43]);
  assert.equal(await pull(reopened, 41, 50), { seqs: [42, 43], reached: 43, hasMore: false });
});

test('a cursor past everything stored reads nothing and stays where it is', async ({ store }) => {
  await fill(store, times(3, 'a'));
  assert.equal(await pull(store, 7, 50), { seqs: [], reached: 7, hasMore: false });
});

test('a page is read with little more than its own events: the page plus one, key by key, and no iterator', async ({ store }) => {
  await fill(store, times(5_000, 'a'));
  const reads = countedReads(store);
  assert.equal((await pull(store, 100, 50)).seqs.length, 50);
  assert.equal(reads, { eventsRead: 51, iterators: 0, iteratorCalls: 0 });
  assert.equal(await pull(store, 4_980, 50), { seqs: Array.from({ length: 20 }, (_, i) => 4_981 + i), reached: 5_000, hasMore: false });
  assert.equal(reads, { eventsRead: 51 + 20, iterators: 0, iteratorCalls: 0 }, 'at the end of what is stored, no iterator looks further');
  await putAt(store, [5_010, 5_011]); // a gap: 5,001 to 5,009 were never kept
  assert.equal((await pull(store, 4_990, 50)).seqs, [...Array.from({ length: 10 }, (_, i) => 4_991 + i), 5_010, 5_011]);
  assert.equal(reads, { eventsRead: 51 + 20 + 10 + 2, iterators: 1, iteratorCalls: 2 }, 'past the gap one iterator, which reads what is left');
});

test('a scan past the first chunk reads events of a kilobyte in chunks of hundreds, not of 16 KiB', async ({ store }) => {
  const events = Array.from({ length: SCAN_BOUND }, (_, i) => ({ seq: i + 1, ...b, text: `${i + 1}`.padEnd(1024, ' ') }));
  await store.putAll(events, SCAN_BOUND, quota);
  const reads = countedReads(store);
  assert.equal(await pull(store, 0, 50, onlyA), { seqs: [], reached: SCAN_BOUND, hasMore: false });
  assert.equal({ ...reads, iteratorCalls: 0 }, { eventsRead: SCAN_BOUND, iterators: 1, iteratorCalls: 0 });
  // 51 key by key, then 949 by the iterator, at most 256 KiB (some 250 of these events) a call; at 16 KiB a call it took some seventy
  assert.ok(reads.iteratorCalls <= 8, `${reads.iteratorCalls} calls`);
});

test('the first chunk, read key by key, ends at the text bound too', async ({ store }) => {
  const size = 100 * 1024;
  const reaching = Math.ceil(SCAN_TEXT_BOUND / size); // 41
  await store.putAll(Array.from({ length: 60 }, (_, i) => ({ seq: i + 1, ...b, text: `${i + 1}`.padEnd(size, ' ') })), 60, quota);
  const reads = countedReads(store);
  assert.equal(await pull(store, 0, 50, onlyA), { seqs: [], reached: reaching, hasMore: true });
  assert.ok(reads.eventsRead < 51, `${reads.eventsRead} events read`);
});

test(`the scan stops once it has read ${SCAN_TEXT_BOUND} characters of text, and says more when an event lies past them`, async ({ store }) => {
  const large = 32 * 1024;
  const count = Math.ceil(SCAN_TEXT_BOUND / large); // the event that reaches the bound
  const events = Array.from({ length: count + 2 }, (_, i) => ({ seq: i + 1, ...b, text: `${i + 1}`.padEnd(large, ' ') }));
  events[count + 1] = { ...events[count + 1]!, ...a };
  await store.putAll(events, count + 2, quota);
  assert.equal(await pull(store, 0, 50, onlyA), { seqs: [], reached: count, hasMore: true });
  assert.equal(await pull(store, count, 50, onlyA), { seqs: [count + 2], reached: count + 2, hasMore: false });
});

test('events written while a pull runs are neither skipped nor read twice by the pulls that follow', async ({ store }) => {
  await fill(store, times(10, 'a'));
  const stored = Array.from({ length: 10 }, (_, i) => i + 1);
  // The reputation check awaits in the middle of a pull's scan; a batch of events lands there.
  const writing = async () => {
    if (stored.length < 200) {
      const seqs = [1, 2, 3].map((i) => stored.length + i);
      await putAt(store, seqs);
      stored.push(...seqs);
    }
    return new Map<string, number>();
  };
  const filter: PullFilter = { reputation: { provider: 'pact.settlement.v1', minimum: 0 } };
  const seen: number[] = [];
  for (let after = 0, rounds = 0; rounds < 200; rounds++) {
    const page = await pullPage(store, after, 7, filter, T0, writing);
    seen.push(...page.events.map(Number));
    after = seqOfCursor(page.nextCursor)!;
    if (page.events.length === 0) await writing(); // caught up: no scan to land in
  }
  assert.ok(stored.length > 200);
  assert.equal(seen, stored);
});

/** Counts the store's reads of events as they happen (a look inside: what a pull costs is the point). */
function countedReads(store: EventStore): { eventsRead: number; iterators: number; iteratorCalls: number } {
  const counts = { eventsRead: 0, iterators: 0, iteratorCalls: 0 };
  const records = (store as unknown as { records: { getSync: (key: string) => unknown; iterator: (options: object) => { nextv: (n: number) => Promise<unknown[]> } } }).records;
  const [getSync, iterator] = [records.getSync.bind(records), records.iterator.bind(records)];
  records.getSync = (key) => {
    const found = getSync(key);
    if (found !== undefined) counts.eventsRead++;
    return found;
  };
  records.iterator = (options) => {
    counts.iterators++;
    const it = iterator(options);
    const nextv = it.nextv.bind(it);
    it.nextv = async (n) => {
      const entries = await nextv(n);
      counts.eventsRead += entries.length;
      counts.iteratorCalls++;
      return entries;
    };
    return it;
  };
  return counts;
}

test.run();
