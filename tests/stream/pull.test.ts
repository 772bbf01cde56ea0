import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { publicEvent } from '../../client/stream.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { EventStore } from '../../stream/event-store.js';
import { cursorOf, pullPage, SCAN_BOUND, seqOfCursor, type PullFilter } from '../../stream/pull.js';
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

test(`the scan stops at ${SCAN_BOUND} events read: more may match past it, even when none follows`, async ({ store }) => {
  await fill(store, [...times(SCAN_BOUND, 'b'), 'a']);
  assert.equal(await pull(store, 0, 50, onlyA), { seqs: [], reached: SCAN_BOUND, hasMore: true });
  assert.equal(await pull(store, SCAN_BOUND, 50, onlyA), { seqs: [SCAN_BOUND + 1], reached: SCAN_BOUND + 1, hasMore: false });
  assert.equal(await pull(store, 1, 50, onlyA), { seqs: [SCAN_BOUND + 1], reached: SCAN_BOUND + 1, hasMore: true }, 'the bound reached, the page not full');
  assert.equal(await pull(store, 1, 50, { public: { channels: ['none'] } }), { seqs: [], reached: SCAN_BOUND + 1, hasMore: true });
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
  assert.is(cursorOf(7), (await pullPage(store, 7, 50, {}, T0, noReputations)).nextCursor);
});

test.run();
