import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact } from '../../machines/pact/types.js';
import { ReadModel, recordOfStored } from '../../projection/read-model.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { openLevel, type JsonLevel } from '../../storage/level.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// The read model on a real LevelDB: indexes move with updates, and pages never split a millisecond.

const test = suite<{ dir: string; level: JsonLevel; model: ReadModel }>('read model');
const a = generateKeyPair();
const b = generateKeyPair();

test.before.each(async (context) => {
  context.dir = mkdtempSync(join(tmpdir(), 'pact-rm-'));
  context.level = await openLevel(context.dir);
  context.model = new ReadModel(context.level);
});
test.after.each(async ({ dir, level }) => {
  await level.close();
  rmSync(dir, { recursive: true, force: true });
});

const pactAt = (n: number, updatedAt: number): Pact => ({ ...pactFrom(twoPartySpec(a, b)), id: `p_${String(n).padStart(32, '0')}`, updatedAt });
/** Writes `pacts` as the projector does, each as its own journal entry. */
const put = (model: ReadModel, pacts: Pact[], seq: number) =>
  model.putAll(pacts.map((pact, i) => ({ pact, text: JSON.stringify(pact), seq: seq - pacts.length + i + 1, recentCommands: [] })), seq);
const ids = (pacts: { id: string }[]) => pacts.map((p) => Number(p.id.slice(2)));

test('a page holds a whole millisecond, so paging by since skips nothing', async ({ model }) => {
  const times = [10, 20, 20, 20, 30, 40];
  await put(model, times.map((t, n) => pactAt(n, t)), 6);
  const first = await model.list({ limit: 2 });
  assert.equal(ids(first.pacts), [0, 1, 2, 3], 'the three pacts of ms 20 come together');
  assert.is(first.nextSince, 20);
  const second = await model.list({ limit: 2, since: 20 });
  assert.equal(ids(second.pacts), [4, 5]);
  assert.is(second.nextSince, null);
});

test('an update moves the pact in every index and the checkpoint follows', async ({ model }) => {
  const pact = pactAt(1, 100);
  await put(model, [pact], 1);
  await put(model, [{ ...pact, state: 'ACTIVE', updatedAt: 200 }], 2);
  assert.equal(ids((await model.list({ limit: 10, state: 'CREATED' })).pacts), []);
  assert.equal(ids((await model.list({ limit: 10, state: 'ACTIVE', party: a.party })).pacts), [1]);
  assert.equal(ids((await model.list({ limit: 10, since: 100 })).pacts), [1]);
  assert.equal(ids((await model.list({ limit: 10, since: 200 })).pacts), []);
  assert.is(await model.checkpoint(), 2);
  assert.is((await model.stateCounts()).ACTIVE, 1);
});

test('two versions of one pact in one batch leave one record and one set of index entries', async ({ model }) => {
  const pact = pactAt(7, 100);
  await put(model, [pact, { ...pact, state: 'ACTIVE', updatedAt: 150 }], 9);
  assert.is((await model.get(pact.id))?.state, 'ACTIVE');
  assert.equal(ids((await model.list({ limit: 10 })).pacts), [7]);
  assert.is((await model.stateCounts()).CREATED, 0);
});

test('a page that hits the scan limit inside one millisecond still makes progress', async ({ model }) => {
  const crowd = Array.from({ length: 5_010 }, (_, i) => ({ ...pactAt(100 + i, 100), groupId: 'G' }));
  await put(model, crowd, 1);
  const page = await model.list({ groupId: 'G', party: generateKeyPair().party, limit: 10 });
  assert.equal(page, { pacts: [], nextSince: null });
});

test('state counts are kept with the data: a reopened read model has them without counting', async ({ model, level }) => {
  await put(model, [pactAt(1, 100), pactAt(2, 100), { ...pactAt(3, 100), state: 'DISPUTED' }], 3);
  await put(model, [{ ...pactAt(2, 200), state: 'ACTIVE' }], 4);
  const counts = await model.stateCounts();
  assert.equal([counts.CREATED, counts.ACTIVE, counts.DISPUTED], [1, 1, 1]);
  assert.equal(await new ReadModel(level).stateCounts(), counts);
});

test('each open pact has its next deadline in the index; a closed one leaves it', async ({ model }) => {
  const created = { ...pactAt(1, 100), fundBy: 5_000 };
  const other = { ...pactAt(2, 100), fundBy: 9_000 };
  await put(model, [created, other], 2);
  assert.equal(await model.dueBy(5_000, 10), [created.id]);
  assert.is(await model.earliestDeadline(), 5_000);
  await put(model, [{ ...created, state: 'ACTIVE', performBy: 7_000 }], 3);
  assert.equal(await model.dueBy(8_000, 10), [created.id], 'moved from fundBy to performBy');
  assert.equal(await model.dueBy(6_000, 10), []);
  await put(model, [{ ...created, state: 'SETTLED', performBy: 7_000 }], 4);
  assert.equal(await model.dueBy(10_000, 10), [other.id]);
  assert.is(await model.earliestDeadline(), 9_000);
});

test('a read model of an older layout is cleared when opened, for the journal to rebuild', async ({ level }) => {
  await level.sublevel<string, unknown>('snapshots', { valueEncoding: 'json' }).put('p_old', { seq: 3 });
  await level.sublevel('pacts', { valueEncoding: 'utf8' }).put('p_old', '{"id":"p_old"}');
  await level.sublevel<string, unknown>('meta', { valueEncoding: 'json' }).put('journalSeq', 3);
  const model = new ReadModel(level);
  await model.open();
  assert.is(await model.get('p_old'), undefined);
  assert.is(await model.checkpoint(), 0, 'the projector replays the journal from its start');
  await put(model, [pactAt(1, 100)], 1);
  await new ReadModel(level).open(); // this layout is kept
  assert.is(await model.checkpoint(), 1);
});

test('a stored record is the text and head of one write, while writes go on', async ({ model, level }) => {
  const pact = pactAt(1, 0);
  let writing = true;
  const writer = (async () => {
    try {
      for (let seq = 1; seq <= 600; seq++) await put(model, [{ ...pact, updatedAt: seq }], seq);
    } finally {
      writing = false;
    }
  })();
  const torn: string[] = [];
  let reads = 0;
  const check = (record: { pact: Pact; seq: number } | undefined) => {
    reads++;
    if (record && record.pact.updatedAt !== record.seq) torn.push(`text of ${record.pact.updatedAt}, head of ${record.seq}`);
  };
  while (writing) {
    check(model.storedRecord(pact.id));
    const [stored] = await model.storedRecords([pact.id]);
    check(stored && recordOfStored(stored));
    if (reads % 64 === 0) await new Promise((resolve) => setImmediate(resolve));
  }
  await writer;
  assert.ok(reads > 600, `read ${reads} times`);
  assert.equal(torn.slice(0, 3), [], `${torn.length} torn records`);
  const headless = `p_${'f'.repeat(32)}`;
  await level.sublevel<string, string>('heads', { valueEncoding: 'utf8' }).put(headless, 'not JSON');
  assert.is(model.storedRecord(headless), undefined, 'no text: its head is not read (this one would not parse)');
});

test.run();
