import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { longPoll } from '../../stream/long-poll.js';
import { cursorOf, type PullPage } from '../../stream/pull.js';

// A long poll between its pulls: woken by new events, ended by its time (one last look) or by its client
// leaving (no further pull). The pulls and the projector are stand-ins that count what they are asked.

/** A projector that wakes its listeners when told, and the pulls asked of a stream holding `events` after 5. */
function fixture(events: string[] = []) {
  const listeners = new Set<() => void>();
  const pulls: number[] = [];
  let stored: string[] = [];
  return {
    pulls,
    projector: { onceEvents: (listener: () => void) => (listeners.add(listener), () => listeners.delete(listener)) },
    pageAfter: async (after: number): Promise<PullPage> => {
      pulls.push(after);
      return { events: stored, nextCursor: cursorOf(after + stored.length), hasMore: false };
    },
    /** The projector writes `events`: the next pull finds them. */
    write() {
      stored = events;
      for (const listener of [...listeners]) listener();
      listeners.clear();
    },
    listening: () => listeners.size,
  };
}

const soon = () => new Promise((resolve) => setTimeout(resolve, 20));

test('new events wake the poll, which pulls again from where it stood and answers them', async () => {
  const stream = fixture(['"e"']);
  const polling = longPoll(stream.pageAfter, stream.projector, 5, Date.now() + 10_000, new AbortController().signal);
  await soon();
  stream.write();
  assert.equal((await polling).events, ['"e"']);
  assert.equal(stream.pulls, [5, 5]);
  assert.is(stream.listening(), 0);
});

test('when its time is up, the poll looks once more', async () => {
  const stream = fixture();
  const page = await longPoll(stream.pageAfter, stream.projector, 5, Date.now() + 50, new AbortController().signal);
  assert.equal(page.events, []);
  assert.equal(stream.pulls, [5, 5]);
  assert.is(stream.listening(), 0);
});

test('a client that leaves ends the poll at once, with no further pull', async () => {
  const stream = fixture();
  const leaving = new AbortController();
  const polling = longPoll(stream.pageAfter, stream.projector, 5, Date.now() + 10_000, leaving.signal);
  await soon();
  leaving.abort();
  assert.equal((await polling).events, []);
  assert.equal(stream.pulls, [5], 'one pull, before the client left');
  assert.is(stream.listening(), 0, 'no longer waiting for events');
});

test('a client gone before the poll begins costs no pull', async () => {
  const stream = fixture();
  const left = new AbortController();
  left.abort();
  assert.equal((await longPoll(stream.pageAfter, stream.projector, 5, Date.now() + 10_000, left.signal)).events, []);
  assert.equal(stream.pulls, []);
  assert.is(stream.listening(), 0);
});

test('a pull that fails fails the poll, which stops waiting', async () => {
  const stream = fixture();
  const failing = async () => {
    throw new Error('store unreadable');
  };
  await longPoll(failing, stream.projector, 5, Date.now() + 10_000, new AbortController().signal).then(
    () => assert.unreachable('the poll answered'),
    (error: unknown) => assert.match(String(error), /store unreadable/),
  );
  assert.is(stream.listening(), 0);
});

test.run();
