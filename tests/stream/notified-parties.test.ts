import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { openLevel, type JsonLevel } from '../../storage/level.js';
import { NotifiedParties } from '../../stream/notified-parties.js';

// The notifier's copy of each open pact's parties: what it wrote is there for the next notifier on the
// same LevelDB, until the pact ends. Real LevelDB.

const test = suite<{ dir: string; level: JsonLevel }>('notified parties');
test.before.each(async (context) => {
  context.dir = mkdtempSync(join(tmpdir(), 'pact-parties-'));
  context.level = await openLevel(context.dir);
});
test.after.each(async ({ dir, level }) => {
  await level.close();
  rmSync(dir, { recursive: true, force: true });
});

test('written parties are there for a new instance; an ended pact\'s are not', async ({ level }) => {
  const first = new NotifiedParties(level);
  first.created('p_a', ['ed25519:a', 'ed25519:b']);
  first.created('p_b', ['ed25519:c']);
  assert.equal(await first.of('p_a'), ['ed25519:a', 'ed25519:b'], 'known before it is written');
  assert.is(await new NotifiedParties(level).of('p_a'), undefined, 'not on disk before write()');
  await first.write();
  first.ended('p_b');
  await first.write();
  const next = new NotifiedParties(level);
  assert.equal(await next.of('p_a'), ['ed25519:a', 'ed25519:b']);
  assert.is(await next.of('p_b'), undefined);
});

test.run();
