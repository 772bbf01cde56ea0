import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Journal, type JournalEntry } from '../../actors/journal.js';
import { evolve } from '../../machines/pact/evolve.js';
import type { Pact } from '../../machines/pact/types.js';
import { Projector } from '../../projection/projector.js';
import { ReadModel, type PactRecord } from '../../projection/read-model.js';
import { generateKeyPair } from '../../protocol/sign.js';
import type { JsonLevel } from '../../storage/level.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// The projector on a real nats-server and LevelDB: the journal path, the local-commit path, and both at once.

interface Context {
  bench: JournalBench;
  journal: Journal;
  level: JsonLevel;
  readModel: ReadModel;
  projector: Projector;
}

const test = suite<Context>('projector');

async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A read model whose next write fails, as a full disk would make it. */
class FailingOnce extends ReadModel {
  failures = 1;
  override async putAll(records: PactRecord[], seq: number): Promise<void> {
    if (this.failures-- > 0) throw new Error('disk full');
    return super.putAll(records, seq);
  }
}

test.before.each(async (context) => {
  context.bench = await startJournalBench('projector');
  context.journal = context.bench.journal;
  context.level = context.bench.level;
  context.readModel = new FailingOnce(context.level);
  (context.readModel as FailingOnce).failures = 0;
  context.projector = new Projector(context.bench.nats, context.readModel, 'test-node');
});
test.after.each(async ({ bench, projector }) => {
  await projector.stop();
  await bench.stop();
});

let pacts = 0;
const newPactWith = (spec: string): Pact => ({
  ...pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair(), { terms: { spec } })),
  id: `p_${String(++pacts).padStart(32, 'e')}`,
});
const created = (pact: Pact, commandId = 'c1'): JournalEntry => ({ pactId: pact.id, nonce: 0, commandId, event: { type: 'created', at: 1, pact } });
const funded = (pact: Pact): { entry: JournalEntry; next: Pact } => {
  const event = { type: 'fund' as const, at: 2, party: pact.parties[0]!.party, receipt: 'mock:r1' };
  const next = evolve(pact, event)!;
  return { entry: { pactId: pact.id, nonce: next.stateNonce, commandId: 'c2', event }, next };
};
const recordOf = (pact: Pact, seq: number, recentCommands: string[]): PactRecord => ({ pact, text: JSON.stringify(pact), seq, recentCommands });

test('a write the read model could not make is retried; the projector never moves past it', async ({ journal, readModel, projector, level }) => {
  (readModel as FailingOnce).failures = 1;
  const pact = newPactWith('deliver');
  const seq = await journal.append(created(pact));
  await within(projector.start(), 10_000); // start waits until the journal's last entry is in the read model
  const reopened = new ReadModel(level);
  assert.is((await reopened.get(pact.id))?.id, pact.id);
  assert.is(await reopened.checkpoint(), seq);
});

test('a listener that throws keeps neither the others nor the projector from going on', async ({ journal, projector }) => {
  const told: string[] = [];
  projector.onEntry(() => {
    throw new Error('a broken listener');
  });
  projector.onEntry((pact) => told.push(pact.id));
  const [first, second] = [newPactWith('one'), newPactWith('two')];
  await journal.append(created(first));
  await within(projector.start(), 10_000);
  const seq = await journal.append(created(second));
  await within(projector.reached(seq), 10_000);
  assert.equal(told, [first.id, second.id]);
});

test('a local commit is readable at once, and its journal message is skipped by sequence, not applied again', async (context) => {
  const { journal, readModel, projector } = context;
  const inJournal = newPactWith('as journaled');
  const seq = await journal.append(created(inJournal));
  // The record handed over differs from what replaying the journal gives: whichever is kept tells the path.
  const asCommitted = { ...inJournal, terms: { spec: 'as committed' } };
  projector.committed({ entry: created(inJournal), previousSeq: 0, record: recordOf(asCommitted, seq, ['c1']) });
  assert.is((await readModel.get(inJournal.id))?.terms.spec, 'as committed', 'readable before it is written');
  await within(projector.start(), 10_000); // the journal message comes after the commit, as it does under load
  assert.is((await new ReadModel(context.level).get(inJournal.id))?.terms.spec, 'as committed', 'on disk, and not replayed over');
  assert.equal(readModel.record(inJournal.id)?.recentCommands, ['c1']);
});

test('a commit on an entry the read model lacks waits for the journal to bring both, in order', async (context) => {
  const { journal, readModel, projector } = context;
  const pact = newPactWith('written elsewhere first');
  const first = await journal.append(created(pact)); // another host's entry: never committed here
  const { entry, next } = funded(pact);
  const second = await journal.append(entry);
  // Committed before the projector reads anything, so the read model surely lacks the first entry (a running
  // projector might already have it, and then the commit rightly applies at once).
  projector.committed({ entry, previousSeq: first, record: recordOf({ ...next, terms: { spec: 'as committed' } }, second, ['c1', 'c2']) });
  await within(projector.start(), 10_000);
  await within(projector.reached(second), 10_000);
  const stored = new ReadModel(context.level).storedRecord(pact.id);
  assert.is(stored?.seq, second);
  assert.is(stored?.pact.state, next.state);
  assert.is(stored?.pact.terms.spec, 'written elsewhere first', 'replayed from the journal, on the first entry');
  assert.is((await readModel.get(pact.id))?.terms.spec, 'written elsewhere first', 'the commit is no longer what reads see');
});

test('an entry on a pact written before, and no longer in memory, is replayed on its record from disk', async (context) => {
  const { journal, readModel, projector, bench } = context;
  const pact = newPactWith('written, then forgotten');
  const first = await journal.append(created(pact));
  await within(projector.start(), 10_000);
  await within(projector.reached(first), 10_000);
  await projector.stop();
  const { entry, next } = funded(pact);
  const second = await journal.append(entry); // another host's entry, for a projector that holds nothing in memory
  context.projector = new Projector(bench.nats, readModel, 'test-node');
  await within(context.projector.start(), 10_000);
  await within(context.projector.reached(second), 10_000);
  const stored = readModel.storedRecord(pact.id);
  assert.is(stored?.seq, second, 'replayed, not refused as an entry with no pact before it');
  assert.is(stored?.pact.state, next.state);
  assert.equal(stored?.recentCommands, ['c1', 'c2'], 'on the stored record');
});

test.run();
