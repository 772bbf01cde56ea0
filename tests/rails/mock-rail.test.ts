import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MOCK_ESCROW, MockRail } from '../../rails/mock/mock-rail.js';
import { RailError } from '../../rails/rail.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { openLevel, type JsonLevel } from '../../storage/level.js';

// The mock rail on a real LevelDB: keyed operations apply once, survive a restart, and a ledger whose
// write failed stops taking operations instead of drifting from its disk copy.

const test = suite<{ dir: string; level: JsonLevel; rail: MockRail }>('mock rail');
const payer = generateKeyPair().party;
const money = (amount: string) => ({ amount, asset: 'USDC' });
const collect = (rail: MockRail, key: string, amount = '300') =>
  rail.collect({ key, pactId: 'p_x', payer, amount: money(amount), proof: { scheme: 'mock' } });

test.before.each(async (context) => {
  context.dir = mkdtempSync(join(tmpdir(), 'pact-rail-'));
  context.level = await openLevel(context.dir);
  context.rail = await MockRail.open(context.level, 1_000n);
});
test.after.each(async ({ dir, level }) => {
  await level.close().catch(() => undefined);
  rmSync(dir, { recursive: true, force: true });
});

test('a key collects once, whatever the retries, and pays out once', async ({ rail }) => {
  const [first, again] = await Promise.all([collect(rail, 'k1'), collect(rail, 'k1')]);
  assert.is(again.ref, first.ref);
  const payout = { key: 'k1:out', pactId: 'p_x', payee: payer, amount: money('300'), purpose: 'refund' as const };
  assert.is((await rail.payout(payout)).ref, (await rail.payout(payout)).ref);
  assert.equal(await rail.balances(), { [payer]: '1000', [MOCK_ESCROW]: '0' });
});

test('its places are its operations in order: a collect where one was made, none at a payout', async ({ rail }) => {
  await collect(rail, 'k6', '100');
  await rail.payout({ key: 'k6:out', pactId: 'p_x', payee: payer, amount: money('100'), purpose: 'refund' });
  await collect(rail, 'k7', '100');
  const places = [];
  for await (const { position, place } of rail.collects(1)) places.push([position, typeof place === 'object' ? place.key : place]);
  assert.equal(places, [[1, 'none'], [2, 'k7']]);
  assert.is(((await rail.collectAt(0)) as { key: string }).key, 'k6');
  assert.is(await rail.collectAt(3), 'none');
});

test('a payer without the balance is refused and nothing moves', async ({ rail }) => {
  try {
    await collect(rail, 'k2', '1001');
    assert.unreachable();
  } catch (error) {
    assert.instance(error, RailError);
    assert.is((error as RailError).code, 'insufficient_funds');
  }
  assert.equal(await rail.operations(), []);
});

test('the ledger comes back after a restart', async ({ dir, level, rail }) => {
  await collect(rail, 'k3');
  await level.close();
  const reopened = await openLevel(dir);
  const again = await MockRail.open(reopened, 1_000n);
  assert.equal(await again.balances(), { [payer]: '700', [MOCK_ESCROW]: '300' });
  assert.equal((await again.operations()).map((op) => op.key), ['k3']);
  await reopened.close();
});

test('after a failed write the ledger takes no more operations and says it is not live', async ({ level, rail }) => {
  await level.close(); // every write fails from here
  for (const key of ['k4', 'k5']) {
    try {
      await collect(rail, key);
      assert.unreachable();
    } catch {
      // the first fails on the write, the second is refused up front
    }
  }
  assert.is((await rail.health()).live, false);
  const seen = [];
  for await (const { place } of rail.collects(0)) if (place !== 'none') seen.push(place);
  assert.equal(seen, [], 'a collect that never reached the disk is not reported');
});

test.run();
