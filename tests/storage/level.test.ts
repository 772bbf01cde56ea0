import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../runtime/config.js';
import { openLevel, type JsonLevel } from '../../storage/level.js';

/** About 6 MiB of values, more than LevelDB's default memtable holds. */
async function writeSixMiB(db: JsonLevel): Promise<void> {
  for (let i = 0; i < 48; i++) {
    await db.batch(Array.from({ length: 64 }, (_, j) => ({ type: 'put' as const, key: `k${i}-${j}`, value: randomBytes(1024).toString('hex') })));
  }
}

/**
 * Tables at any level once LevelDB's background flush is done (it flushes a full memtable as soon as it can,
 * to level 0 or, in an empty database, further down).
 */
async function tables(db: JsonLevel): Promise<number> {
  await new Promise((resolve) => setTimeout(resolve, 500));
  const levels = Array.from({ length: 7 }, (_, level) => Number(db.getProperty(`leveldb.num-files-at-level${level}`)));
  return levels.reduce((sum, count) => sum + count, 0);
}

async function tablesAfterSixMiB(writeBufferBytes?: number): Promise<number> {
  const root = await mkdtemp(join(tmpdir(), 'level-'));
  const db = await openLevel(join(root, 'db'), writeBufferBytes === undefined ? {} : { writeBufferBytes });
  try {
    await writeSixMiB(db);
    return await tables(db);
  } finally {
    await db.close();
    await rm(root, { recursive: true, force: true });
  }
}

test('a database opened with a larger write buffer keeps in its memtable what the default flushes to a table', async () => {
  assert.ok((await tablesAfterSixMiB()) >= 1, 'the default 4 MiB memtable was flushed');
  assert.is(await tablesAfterSixMiB(16 * 2 ** 20), 0);
});

test('PACT_LEVELDB_WRITE_BUFFER_BYTES: 8 MiB by default, and a size LevelDB would not keep to stops the start', () => {
  assert.is(loadConfig({}).levelWriteBufferBytes, 8 * 2 ** 20);
  assert.is(loadConfig({ PACT_LEVELDB_WRITE_BUFFER_BYTES: '16777216' }).levelWriteBufferBytes, 16 * 2 ** 20);
  assert.throws(() => loadConfig({ PACT_LEVELDB_WRITE_BUFFER_BYTES: '1024' }), /PACT_LEVELDB_WRITE_BUFFER_BYTES must be between/);
  assert.throws(() => loadConfig({ PACT_LEVELDB_WRITE_BUFFER_BYTES: String(2 ** 31) }), /PACT_LEVELDB_WRITE_BUFFER_BYTES must be between/);
  assert.throws(() => loadConfig({ PACT_LEVELDB_WRITE_BUFFER_BYTES: 'big' }), /non-negative integer/);
});

test.run();
