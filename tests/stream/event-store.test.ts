import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { publicEvent } from '../../client/stream.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { EventStore, HOUR_MS, RECORDS_SUBLEVEL } from '../../stream/event-store.js';
import type { JsonLevel } from '../../storage/level.js';
import { freshEventStoreEach, type EventStoreContext } from '../support/event-store.js';

// The node's event store on a real LevelDB: the quota applied in stream order, and events forgotten after
// seven days as the stream's maximum age drops them.

const test = suite<EventStoreContext>('event store');
const T0 = 1_800_000_000_000;
const key = generateKeyPair();
const server = generateKeyPair();
const quota = { perHour: 2, exempt: server.party };

freshEventStoreEach(test);

const received = (publisher = key, receivedAt = T0, n = 0) => {
  const event = publicEvent(publisher, { kind: 'k', channel: 'c', body: { n } }, receivedAt);
  return { received: { receivedAt, event }, text: JSON.stringify(event) };
};

test('past the quota in its hour an event is not kept, in stream order; the next hour starts again; the server is exempt', async ({ store }) => {
  const batch = [received(key, T0, 1), received(key, T0, 2), received(key, T0, 3), received(server, T0, 4), received(server, T0, 5), received(server, T0, 6), received(key, T0 + HOUR_MS, 7)];
  await store.putAll(batch.map((b, i) => ({ seq: i + 1, ...b })), batch.length, quota);
  const kept = batch.map((b) => store.seqOf(b.received.event.id));
  assert.equal(kept, [1, 2, undefined, 4, 5, 6, 7]);
  assert.is(store.takenInHour(key.party, T0), 2);
});

test('events taken more than seven days ago are forgotten', async ({ store }) => {
  const old = received(key, T0, 1);
  const recent = received(key, T0 + 6 * 24 * HOUR_MS, 2);
  await store.putAll([{ seq: 1, ...old }, { seq: 2, ...recent }], 2, quota);
  assert.is(await store.sweep(T0 + 7 * 24 * HOUR_MS + HOUR_MS), 1); // its hour ended more than seven days ago too
  assert.is(store.seqOf(old.received.event.id), undefined);
  assert.is(store.seqOf(recent.received.event.id), 2);
  assert.is(store.takenInHour(key.party, T0), 0, 'the old hour is forgotten');
  assert.is(store.takenInHour(key.party, T0 + 6 * 24 * HOUR_MS), 1);
  const kept = [];
  for await (const chunk of store.eventChunks(0, 10, 1, Infinity)) kept.push(...chunk.map(({ seq, text }) => ({ seq, text })));
  assert.equal(kept, [{ seq: 2, text: recent.text }]);
});

test('events before the stream\'s first sequence (dropped by its byte limit) are forgotten, with their ids and times', async ({ store }) => {
  const batch = [received(server, T0, 1), received(server, T0 + 1, 2), received(server, T0 + 2, 3)]; // exempt from the quota
  await store.putAll(batch.map((b, i) => ({ seq: i + 1, ...b })), 3, quota);
  assert.is(await store.sweepBefore(3), 2);
  assert.equal(batch.map((b) => store.seqOf(b.received.event.id)), [undefined, undefined, 3]);
  assert.is(await store.seqBefore(T0), 2, 'the first event still kept is the next after a start from T0');
  assert.is(await store.sweepBefore(3), 0);
});

test('what the store keeps in memory agrees with the disk: a new store on the same LevelDB answers the same', async ({ level, store }) => {
  const batch = [received(key, T0, 1), received(key, T0, 2), received(key, T0, 3)];
  await store.putAll(batch.map((b, i) => ({ seq: i + 1, ...b })), 3, quota);
  const fresh = new EventStore(level);
  await fresh.open('stream made at T0');
  for (const s of [store, fresh]) {
    assert.equal(batch.map((b) => s.seqOf(b.received.event.id)), [1, 2, undefined]);
    assert.is(s.takenInHour(key.party, T0), 2);
  }
});

/** A store as an earlier layout left it: an event in each of `sublevels`, its id, how far it read and notified. */
async function earlierStore(level: JsonLevel, stream: string, sublevels: string[]) {
  for (const name of sublevels) await level.sublevel<string, string>(name, { valueEncoding: 'utf8' }).put('000000000000001', '{}');
  await level.sublevel<string, number>('event-ids', { valueEncoding: 'json' }).put('evt_old', 1);
  const meta = level.sublevel<string, unknown>('event-meta', { valueEncoding: 'json' });
  await meta.put('stream', stream);
  await meta.put('streamSeq', 1);
  await meta.put('notifiedSeq', 9);
}

const EARLIER_LAYOUTS = [
  { layout: 1, stream: 'stream made at T1', sublevels: ['events', 'event-facets'] },
  { layout: 2, stream: 'stream made at T1 layout 2', sublevels: ['events', 'event-facets'] },
  { layout: 3, stream: 'stream made at T1 layout 3', sublevels: ['event-records'] },
];

for (const { layout, stream, sublevels } of EARLIER_LAYOUTS) {
  test(`a store of layout ${layout} is emptied when opened, its retired sublevels with it; how far the pact journal was notified is kept`, async ({ level }) => {
    await earlierStore(level, stream, sublevels);
    const store = new EventStore(level);
    await store.open('stream made at T1');
    for (const name of sublevels) assert.equal(await level.sublevel(name).keys().all(), [], name);
    assert.is(store.seqOf('evt_old'), undefined);
    assert.is(await store.checkpoint(), 0);
    assert.is(await store.notifiedUpTo(), 9, 'the notifications are in the stream the store is rebuilt from');
  });
}

test('a start that dies while clearing an earlier layout leaves it for the next start to clear, how far it notified kept', async ({ level }) => {
  await earlierStore(level, 'stream made at T1 layout 2', ['events', 'event-facets']);
  const sublevel = level.sublevel.bind(level);
  level.sublevel = ((name: string, options?: object) => {
    const made = sublevel(name, options as never);
    if (name === 'event-facets') made.clear = async () => Promise.reject(new Error('killed while clearing'));
    return made;
  }) as typeof level.sublevel;
  const died = await new EventStore(level).open('stream made at T1').then(() => undefined, (error: Error) => error.message);
  assert.is(died, 'killed while clearing');
  level.sublevel = sublevel;
  const meta = level.sublevel<string, unknown>('event-meta', { valueEncoding: 'json' });
  assert.is(await meta.get('stream'), 'stream made at T1 layout 2', 'still the earlier store');
  const store = new EventStore(level);
  await store.open('stream made at T1');
  assert.equal(await level.sublevel('event-facets').keys().all(), []);
  assert.is(await store.checkpoint(), 0);
  assert.is(await store.notifiedUpTo(), 9);
});

test('a store of another stream is emptied when opened, how far the pact journal was notified included', async ({ store, level }) => {
  await store.putAll([{ seq: 1, ...received(key, T0, 1) }], 1, quota);
  await store.notified(9);
  const other = new EventStore(level);
  await other.open('stream made at T2');
  assert.is(await other.checkpoint(), 0);
  assert.is(await other.notifiedUpTo(), 0);
  assert.equal(await level.sublevel(RECORDS_SUBLEVEL).keys().all(), []);
});

test.run();
