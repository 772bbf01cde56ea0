import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { seqBeforeTime } from '../../actors/stream-journal.js';
import { JOURNAL_STREAM } from '../../actors/subjects.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// Where a reader starts to miss nothing a stream took from a given time on, found by nats-server from the
// times it stored the messages with (its clock: the one this machine's tests share).

const test = suite<{ bench: JournalBench }>('the sequence before a time');
test.before.each(async (context) => {
  context.bench = await startJournalBench('seq-before-time');
});
test.after.each(({ bench }) => bench.stop());

const pact = pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair()));

/** Appends `count` entries of the pact from `nonce`; resolves to the last one's sequence. */
async function append(bench: JournalBench, nonce: number, count: number): Promise<number> {
  let seq = 0;
  for (let n = nonce; n < nonce + count; n++) {
    const event = n === 0 ? { type: 'created', at: 1, pact } : { type: 'poke', at: 1 + n };
    seq = await bench.journal.append({ pactId: pact.id, nonce: n, commandId: `command-${n}`, event } as JournalEntry);
  }
  return seq;
}

const pause = () => new Promise((resolve) => setTimeout(resolve, 50));

test('the last message taken before the time; the last of all when none came after it; 0 on an empty stream', async ({ bench }) => {
  assert.is(await seqBeforeTime(bench.nats, JOURNAL_STREAM, Date.now()), 0);
  const before = await append(bench, 0, 3);
  await pause();
  const time = Date.now();
  await pause();
  const last = await append(bench, 3, 2);
  assert.is(await seqBeforeTime(bench.nats, JOURNAL_STREAM, time), before);
  assert.is(await seqBeforeTime(bench.nats, JOURNAL_STREAM, Date.now() + 1_000), last);
  assert.is(await seqBeforeTime(bench.nats, JOURNAL_STREAM, 0), 0);
});

test('past messages deleted at the start, or at the time, it still says where to start', async ({ bench }) => {
  await append(bench, 0, 2);
  await bench.nats.jsm.streams.deleteMessage(JOURNAL_STREAM, 1);
  await bench.nats.jsm.streams.deleteMessage(JOURNAL_STREAM, 2);
  assert.is(await seqBeforeTime(bench.nats, JOURNAL_STREAM, 0), 2);
  await pause();
  const time = Date.now();
  await pause();
  const last = await append(bench, 2, 2);
  await bench.nats.jsm.streams.deleteMessage(JOURNAL_STREAM, last - 1);
  assert.is(await seqBeforeTime(bench.nats, JOURNAL_STREAM, time), last - 1);
});

test('leaves no consumer on the server', async ({ bench }) => {
  await append(bench, 0, 2);
  await pause();
  const time = Date.now();
  await append(bench, 2, 1);
  await seqBeforeTime(bench.nats, JOURNAL_STREAM, time);
  const deadline = Date.now() + 5_000;
  while ((await bench.nats.jsm.streams.info(JOURNAL_STREAM)).state.consumer_count > 0 && Date.now() < deadline) await pause();
  assert.is((await bench.nats.jsm.streams.info(JOURNAL_STREAM)).state.consumer_count, 0);
});

test.run();
