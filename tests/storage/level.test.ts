import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateKeyPair } from '../../protocol/sign.js';
import { openLevel, type JsonLevel } from '../../storage/level.js';
import { twoPartySpec } from '../support/pacts.js';
import { Stack } from '../support/stack.js';
import { until } from '../support/until.js';

/** About 6 MiB of values, more than LevelDB's default memtable holds. */
async function writeSixMiB(db: JsonLevel): Promise<void> {
  for (let i = 0; i < 48; i++) {
    await db.batch(Array.from({ length: 64 }, (_, j) => ({ type: 'put' as const, key: `k${i}-${j}`, value: randomBytes(1024).toString('hex') })));
  }
}

/** The database's write-ahead logs: LevelDB starts a new one the moment its memtable is full. */
const logsIn = (dir: string) => readdirSync(dir).filter((name) => name.endsWith('.log')).sort().join();

async function memtableFilledBySixMiB(writeBufferBytes?: number): Promise<boolean> {
  const root = await mkdtemp(join(tmpdir(), 'level-'));
  const dir = join(root, 'db');
  const db = await openLevel(dir, { writeBufferBytes });
  try {
    const before = logsIn(dir);
    await writeSixMiB(db);
    return logsIn(dir) !== before;
  } finally {
    await db.close();
    await rm(root, { recursive: true, force: true });
  }
}

test('a database opened with a larger write buffer holds in its memtable what fills the default one', async () => {
  assert.ok(await memtableFilledBySixMiB(), 'the default 4 MiB memtable filled');
  assert.not.ok(await memtableFilledBySixMiB(16 * 2 ** 20), 'a 16 MiB memtable did not');
});

test('the service opens its read model with PACT_LEVELDB_WRITE_BUFFER_BYTES', async () => {
  // 64 KiB: a few dozen creates fill it, where the default 8 MiB holds thousands.
  const stack = await Stack.start({ env: { PACT_LEVELDB_WRITE_BUFFER_BYTES: '65536' } });
  try {
    const dir = join(stack.dataDir, 'leveldb');
    const before = logsIn(dir);
    for (let i = 0; i < 40; i++) {
      const [a, b] = [generateKeyPair(), generateKeyPair()];
      assert.is((await stack.client.create(a, twoPartySpec(a, b))).status, 200);
    }
    // the read model is written in batches just after the answers
    await until(() => logsIn(dir) !== before, 'the read model filled a 64 KiB memtable', 10_000);
  } finally {
    await stack.stop();
  }
});

test.run();
