import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Journal } from '../../actors/journal.js';
import type { AdmittedCommand, AdmittedRequest } from '../../actors/messages.js';
import { PactActor, type ActorDeps } from '../../actors/pact-actor.js';
import { MockRail } from '../../rails/mock/mock-rail.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { MemoryRecords } from '../support/memory-records.js';
import { policy, twoPartySpec } from '../support/pacts.js';

// An actor comes back from its pact's record without reading the journal; what it decides without an
// append it decides only on a record known to be current. Real nats-server and LevelDB.

/** The journal, counting how often an actor reads it. */
class CountingJournal extends Journal {
  reads = 0;
  override entriesFrom(pactId: string, nonce: number) {
    this.reads++;
    return super.entriesFrom(pactId, nonce);
  }
}

interface Context {
  bench: JournalBench;
  journal: CountingJournal;
  deps: ActorDeps;
  records: MemoryRecords;
}

const test = suite<Context>('an actor coming back');

test.before.each(async (context) => {
  context.bench = await startJournalBench('coming-back');
  context.journal = new CountingJournal(context.bench.nats.js, context.bench.nats.jsm);
  context.records = new MemoryRecords();
  const rail = await MockRail.open(context.bench.level, 1_000_000n);
  context.deps = { journal: context.journal, records: context.records, rails: new Map([['mock', rail]]), policy };
});
test.after.each(({ bench }) => bench.stop());

const [a, b] = [generateKeyPair(), generateKeyPair()];
let commands = 0;
const request = (command: AdmittedCommand): AdmittedRequest => ({ id: `cmd-${++commands}`, command });
const create = () => request({ type: 'create', spec: twoPartySpec(a, b), signer: a.party });
const pactIds = (() => {
  let n = 0;
  return () => `p_${String(++n).padStart(32, 'c')}`;
})();

test('a create and an accepted command on a pact come back from its record never read the journal', async ({ deps, journal }) => {
  const pactId = pactIds();
  assert.ok((await (await PactActor.load(pactId, deps)).handle(create(), Date.now())).ok);
  const comeBack = await PactActor.load(pactId, deps); // passivated and activated again
  const reply = await comeBack.handle(request({ type: 'fund', signer: a.party, stateNonce: 0, proof: { scheme: 'mock' } }), Date.now());
  assert.ok(reply.ok && reply.pact.stateNonce === 1);
  assert.is(journal.reads, 0);
});

test('a refusal on a record not known to be current is decided again on the journal', async ({ deps, journal, records }) => {
  const pactId = pactIds();
  assert.ok((await (await PactActor.load(pactId, deps)).handle(create(), Date.now())).ok);
  const stale = records.byId.get(pactId)!;
  const actor = await PactActor.load(pactId, deps);
  assert.ok((await actor.handle(request({ type: 'fund', signer: a.party, stateNonce: 0, proof: { scheme: 'mock' } }), Date.now())).ok);
  records.byId.set(pactId, stale); // the node's record missed the fund, as a lagging read model would
  records.isCurrent = false;
  const fundByB = request({ type: 'fund', signer: b.party, stateNonce: 1, proof: null }); // right on the journal, stale on the record
  const reply = await (await PactActor.load(pactId, deps)).handle(fundByB, Date.now());
  assert.equal(reply.ok ? 'ok' : reply.error.error, 'payment_required', 'the 402 of nonce 1, not a nonce mismatch');
  assert.is(journal.reads, 1);
  assert.is(records.byId.get(pactId)?.pact.stateNonce, 1, 'what the journal had is handed back to the records');
});

test.run();
