import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import type { Pact } from '../../machines/pact/types.js';
import { Projector } from '../../projection/projector.js';
import { ReadModel } from '../../projection/read-model.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// A record the read model holds in memory until it is written leaves memory once its pact's written record
// reaches it, also when the journal wrote it before the local commit arrived.

const test = suite<{ bench: JournalBench }>('records held until written');
test.before.each(async (context) => {
  context.bench = await startJournalBench('unwritten');
});
test.after.each(({ bench }) => bench.stop());

test('a commit that arrives after its journal message was written stays in `unwritten` for good', async ({ bench }) => {
  const readModel = new ReadModel(bench.level);
  await readModel.open();
  const projector = new Projector(bench.nats, readModel, 'leak-node');
  await projector.start();
  const pact: Pact = { ...pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair())), id: `p_${'d'.repeat(32)}` };
  const entry: JournalEntry = { pactId: pact.id, nonce: 0, commandId: 'c1', event: { type: 'created', at: 1, pact } };
  const seq = await bench.journal.append(entry);
  await projector.reached(seq); // the journal path got there first
  projector.committed({ entry, previousSeq: 0, record: { pact, text: JSON.stringify(pact), seq, recentCommands: ['c1'] } });
  await projector.allWritten(5_000);
  await new Promise((resolve) => setTimeout(resolve, 200));
  const unwritten = (readModel as unknown as { unwritten: Map<string, unknown> }).unwritten;
  const left = unwritten.size;
  await projector.stop();
  assert.is(left, 0, 'the record is on disk, yet it is still held in memory as not written');
});

test.run();
