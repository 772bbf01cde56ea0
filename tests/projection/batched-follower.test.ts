import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { JOURNAL_STREAM } from '../../actors/subjects.js';
import { BatchedFollower } from '../../projection/batched-follower.js';
import type { JournalMessage } from '../../projection/journal-follower.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';
import { until } from '../support/until.js';

// What the offers', wallets' and Agent Stream's projectors share: a stream written in batches, the position
// moved once a batch is written, and what follows a batch (telling listeners) run after that.

const test = suite<{ bench: JournalBench }>('batched follower');
test.before.each(async (context) => {
  context.bench = await startJournalBench('batched-follower');
});
test.after.each(({ bench }) => bench.stop());

let n = 0;
async function appendCreations(bench: JournalBench, count: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const pact = { ...pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair())), id: `p_${String(++n).padStart(32, 'b')}` };
    const entry: JournalEntry = { pactId: pact.id, nonce: 0, commandId: `c${n}`, event: { type: 'created', at: 1, pact } };
    await bench.journal.append(entry);
  }
}

test('each batch is written once; what follows it sees the position moved, and one that throws writes nothing again', async ({ bench }) => {
  await appendCreations(bench, 3);
  const written: number[] = [];
  const seenAfterwards: { last: number; reached: number }[] = [];
  let throwOnce = true;
  const feed: BatchedFollower = new BatchedFollower(bench.nats, {
    stream: JOURNAL_STREAM,
    consumerName: 'batched-follower-test',
    what: 'the test projector',
    write: async (batch: JournalMessage[]) => {
      written.push(...batch.map((message) => message.seq));
      return () => {
        seenAfterwards.push({ last: batch.at(-1)!.seq, reached: feed.reachedSeq });
        if (throwOnce) {
          throwOnce = false;
          throw new Error('a listener that fails');
        }
      };
    },
  });
  await feed.start(0); // resolves once the three are written
  assert.is(feed.reachedSeq, 3);
  await appendCreations(bench, 2);
  await feed.reached(5, 5_000);
  await until(() => seenAfterwards.at(-1)?.last === 5, 'what follows the last batch ran');
  assert.equal(written, [1, 2, 3, 4, 5], 'every message written once, in order, none again after a failing afterwards');
  for (const { last, reached } of seenAfterwards) assert.is(reached, last, 'the position had moved to the batch when what follows it ran');
  await feed.stop();
});

test('a write that throws is written again, and the position waits for it', async ({ bench }) => {
  await appendCreations(bench, 2);
  let failures = 1;
  const written: number[] = [];
  const feed = new BatchedFollower(bench.nats, {
    stream: JOURNAL_STREAM,
    consumerName: 'batched-follower-retry',
    what: 'the test projector',
    write: async (batch: JournalMessage[]) => {
      if (failures-- > 0) throw new Error('the disk refuses');
      written.push(...batch.map((message) => message.seq));
    },
  });
  const started = feed.start(0);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.is(feed.reachedSeq, 0, 'not moved past a batch that was not written');
  await started;
  assert.equal(written, [1, 2]);
  assert.is(feed.reachedSeq, 2);
  await feed.stop();
});

test.run();
