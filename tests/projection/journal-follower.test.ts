import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { JournalFollower, type JournalMessage } from '../../projection/journal-follower.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';

// A stream with a maximum age (the Agent Stream's seven days) drops its oldest messages: a follower
// starting from before them hands on what is left and does not go looking for what aged out. A receiver
// that is behind holds the follower back, so a long stream never piles up in memory.

const test = suite<{ bench: JournalBench }>('journal follower');
test.before(async (context) => {
  context.bench = await startJournalBench('follower-aged');
});
test.after(({ bench }) => bench.stop());

const STREAM = 'AGED';
const settle = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

test('starting from 0 after the first messages aged out: the rest, in order, with no fill of the aged ones', async ({ bench }) => {
  const { jsm, js } = bench.nats;
  await jsm.streams.add({ name: STREAM, subjects: ['aged.>'], max_age: 1e9 }); // one second
  for (let i = 1; i <= 3; i++) await js.publish('aged.x', new TextEncoder().encode(`old ${i}`));
  await settle(2_500);
  for (let i = 4; i <= 5; i++) await js.publish('aged.x', new TextEncoder().encode(`new ${i}`));
  assert.is((await jsm.streams.info(STREAM)).state.first_seq, 4, 'the old messages aged out');

  const logged: string[] = [];
  const log = console.error;
  console.error = (...args: unknown[]) => void logged.push(args.join(' '));
  const got: JournalMessage[] = [];
  const follower = new JournalFollower(bench.nats, STREAM, 'aged-follower', (message) => void got.push(message));
  try {
    assert.is(await follower.start(0), 5);
    for (let waited = 0; got.length < 2 && waited < 5_000; waited += 50) await settle(50);
  } finally {
    await follower.stop();
    console.error = log;
  }
  assert.equal(got.map((m) => m.seq), [4, 5]);
  assert.equal(logged.filter((line) => line.includes('did not deliver')), [], 'no message was looked for one by one');
});

test('a receiver that returns a promise gets nothing more until it settles; every message arrives once, in order', async ({ bench }) => {
  const { jsm, js } = bench.nats;
  await jsm.streams.add({ name: 'SLOW', subjects: ['slow.>'] });
  const COUNT = 300;
  await Promise.all(Array.from({ length: COUNT }, (_, i) => js.publish('slow.x', new TextEncoder().encode(String(i)))));
  const got: number[] = [];
  let busy = false;
  let overlapped = 0;
  const follower = new JournalFollower(bench.nats, 'SLOW', 'slow-follower', (message) => {
    if (busy) overlapped++;
    got.push(message.seq);
    if (message.seq % 50 !== 0) return undefined;
    busy = true;
    return settle(100).then(() => void (busy = false));
  });
  try {
    await follower.start(0);
    for (let waited = 0; got.length < COUNT && waited < 10_000; waited += 50) await settle(50);
  } finally {
    await follower.stop();
  }
  assert.is(overlapped, 0, 'a message was handed on while the receiver was still busy');
  assert.equal(got, Array.from({ length: COUNT }, (_, i) => i + 1));
});

test('stop() returns while a receiver still holds a message', async ({ bench }) => {
  const { jsm, js } = bench.nats;
  await jsm.streams.add({ name: 'STUCK', subjects: ['stuck.>'] });
  await js.publish('stuck.x', new TextEncoder().encode('1'));
  let held = false;
  const follower = new JournalFollower(bench.nats, 'STUCK', 'stuck-follower', () => {
    held = true;
    return new Promise<void>(() => undefined); // never settles, as a receiver whose disk refuses every write
  });
  await follower.start(0);
  for (let waited = 0; !held && waited < 5_000; waited += 50) await settle(50);
  assert.ok(held);
  const stopped = await Promise.race([follower.stop().then(() => 'stopped'), settle(5_000).then(() => 'hung')]);
  assert.is(stopped, 'stopped');
});

test.run();
