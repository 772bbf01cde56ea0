import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { PactActor, type ActorRecords } from '../../actors/pact-actor.js';
import { Projector } from '../../projection/projector.js';
import { ReadModel } from '../../projection/read-model.js';
import { MockRail } from '../../rails/mock/mock-rail.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, policy, twoPartySpec } from '../support/pacts.js';

// A pact whose journal holds an entry the machine refuses is never vouched for, also after a restart (the
// mark is kept in LevelDB): its actor reads the journal before a fund, which fails, so nothing is collected.

const test = suite<{ bench: JournalBench }>('a pact the machine cannot replay, after a restart');
test.before.each(async (context) => {
  context.bench = await startJournalBench('unreplayable');
});
test.after.each(({ bench }) => bench.stop());

async function collectsAfter(bench: JournalBench, restart: boolean) {
  const [a, b] = [generateKeyPair(), generateKeyPair()];
  const pact = { ...pactFrom(twoPartySpec(a, b)), id: `p_${restart ? 'b' : 'c'}${'0'.repeat(31)}` };
  await bench.journal.append({ pactId: pact.id, nonce: 0, commandId: 'c1', event: { type: 'created', at: 1, pact } });
  const bad: JournalEntry = { pactId: pact.id, nonce: 1, commandId: 'bad', event: { type: 'cosign', at: 2, party: b.party } }; // nothing to cosign
  const takenAt = await bench.journal.append(bad); // the host takes the partition after this

  const readModel = new ReadModel(bench.level);
  await readModel.open();
  let projector = new Projector(bench.nats, readModel, restart ? 'node-r' : 'node-n');
  await projector.start();
  if (restart) {
    await projector.stop();
    projector = new Projector(bench.nats, readModel, 'node-r');
    await projector.start();
  }
  const records: ActorRecords = {
    load: (id) => readModel.record(id),
    current: (id) => projector.vouchesFor(id, takenAt),
    committed: (c) => projector.committed(c),
    recovered: (r) => readModel.remember(r),
  };
  const rail = await MockRail.open(bench.level.sublevel('rail-' + String(restart), { valueEncoding: 'json' }) as never, 1_000_000n);
  const actor = await PactActor.load(pact.id, { journal: bench.journal, records, rails: new Map([['mock', rail]]), policy });
  const outcome = await actor
    .handle({ id: 'fund-a', command: { type: 'fund', signer: a.party, stateNonce: 0, proof: { scheme: 'mock' } } }, pact.createdAt + 1_000)
    .then((r) => (r.ok ? 'ok' : r.error.error), (e: Error) => `threw: ${e.message}`);
  const collects = (await rail.operations()).filter((o) => o.kind === 'collect');
  await projector.stop();
  return { outcome, collects: collects.length };
}

test('without a restart: the fund reads the journal first, fails there, and moves no money', async ({ bench }) => {
  const { outcome, collects } = await collectsAfter(bench, false);
  assert.match(outcome, /^threw/);
  assert.is(collects, 0);
});

test('after a restart: the same, the mark having been kept with the read model', async ({ bench }) => {
  const { outcome, collects } = await collectsAfter(bench, true);
  assert.match(outcome, /^threw/);
  assert.is(collects, 0, 'a collect on a record the node vouched for wrongly would sit in escrow');
});

test.run();
