import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { connectNats } from '../../actors/nats.js';
import type { Pact } from '../../machines/pact/types.js';
import { Projector } from '../../projection/projector.js';
import { ReadModel, type PactRecord } from '../../projection/read-model.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// The projector's consumer takes no acks: a message in flight when a connection drops is never delivered
// again. The read model is the actors' records, what the payout worker pays from and what the keeper pokes
// from, so the projector reads what a gap skipped. A pact with an entry the machine refuses stays marked
// across restarts, and stop() returns while the disk refuses writes.

const test = suite<{ bench: JournalBench }>('projector: nothing skipped, nothing trusted twice');
test.before.each(async (context) => {
  context.bench = await startJournalBench('journal-gaps');
});
test.after.each(({ bench }) => bench.stop());

let n = 0;
const newPact = (): Pact => ({ ...pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair())), id: `p_${String(++n).padStart(32, 'a')}` });
const created = (pact: Pact): JournalEntry => ({ pactId: pact.id, nonce: 0, commandId: `c${n}`, event: { type: 'created', at: 1, pact } });

test('a NATS reconnect while the projector catches up: every journaled pact still has a record', async ({ bench }) => {
  const TOTAL = 5_000;
  const pacts: Pact[] = [];
  for (let i = 0; i < TOTAL; i += 200) {
    const chunk = Array.from({ length: 200 }, newPact);
    pacts.push(...chunk);
    await Promise.all(chunk.map((p) => bench.journal.append(created(p))));
  }
  const reader = await connectNats({ url: bench.server.url }); // the projector's own connection
  const readModel = new ReadModel(bench.level);
  await readModel.open();
  const projector = new Projector(reader, readModel, 'gap-node');
  const started = projector.start();
  // Three reconnects, each once the projector has moved on, with the rest in flight. Each costs the consumer
  // a pull expiry (5 s) before it reads again.
  let reconnects = 0;
  let seen = 0;
  const deadline = Date.now() + 30_000;
  while (reconnects < 3 && projector.reachedSeq < TOTAL && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 5));
    if (projector.reachedSeq > seen) {
      seen = projector.reachedSeq;
      reconnects++;
      await reader.nc.reconnect().catch(() => undefined);
    }
  }
  await Promise.race([started, new Promise((resolve) => setTimeout(resolve, 20_000))]);
  let missing = TOTAL;
  for (let tries = 0; missing > 0 && tries < 50; tries++) {
    if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 200));
    missing = 0;
    for (const pact of pacts) if ((await readModel.get(pact.id)) === undefined) missing++;
  }
  assert.ok(reconnects >= 3, `only ${reconnects} reconnects happened while the projector caught up`);
  const position = projector.reachedSeq;
  await projector.stop();
  await reader.nc.close();
  assert.is(missing, 0, `${missing} journaled pacts were skipped for good; the projector's position is ${position}`);
});

test('a pact whose journal holds an entry the machine refuses is vouched for again after a restart', async ({ bench }) => {
  const pact = newPact();
  await bench.journal.append(created(pact));
  // An entry the machine refuses (nothing to cosign), appended at the pact's next position:
  const bad: JournalEntry = { pactId: pact.id, nonce: 1, commandId: 'bad', event: { type: 'cosign', at: 2, party: pact.parties[0]!.party } };
  await bench.journal.append(bad);

  const readModel = new ReadModel(bench.level);
  await readModel.open();
  const before = new Projector(bench.nats, readModel, 'restart-node');
  await before.start();
  assert.not.ok(before.vouchesFor(pact.id, 0), 'before a restart the pact is never vouched for');
  await before.stop();

  const after = new Projector(bench.nats, new ReadModel(bench.level), 'restart-node'); // the node restarted
  await after.start();
  const vouched = after.vouchesFor(pact.id, 0);
  await after.stop();
  assert.not.ok(vouched, 'after a restart the same pact is vouched for: its actor trusts a record that is not the journal\'s');
});

test('stop() returns while the read model keeps refusing writes (disk full)', async ({ bench }) => {
  class Failing extends ReadModel {
    override async putAll(_records: PactRecord[], _seq: number): Promise<void> {
      throw new Error('disk full');
    }
  }
  const projector = new Projector(bench.nats, new Failing(bench.level), 'stop-node');
  const pact = newPact();
  projector.committed({ entry: created(pact), previousSeq: 0, record: { pact, text: JSON.stringify(pact), seq: 1, recentCommands: ['c'] } });
  const stopped = await Promise.race([projector.stop().then(() => true), new Promise((resolve) => setTimeout(() => resolve(false), 5_000))]);
  (projector as unknown as { stopped: boolean }).stopped = true; // let the loop end so the test process can exit
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  assert.ok(stopped, 'projector.stop() still pending after 5 s: it awaits a write loop that only `stopped` ends, and sets `stopped` after');
});

test.run();
