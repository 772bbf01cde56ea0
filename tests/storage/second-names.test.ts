import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Level } from 'level';
import { SecondNames } from '../../storage/second-names.js';
import { openLevel } from '../../storage/level.js';

const NEVER = 3_600_000;

async function until(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const links = async (path: string) => (await stat(path)).nlink;

/** More than one 4 MiB memtable: LevelDB flushes it to a table and deletes the log it replaces. */
async function fillPastAMemtable(db: Level<string, string>): Promise<void> {
  for (let i = 0; i < 24; i++) {
    await db.batch(Array.from({ length: 64 }, (_, j) => ({ type: 'put' as const, key: `k${i}-${j}`, value: randomBytes(2048).toString('hex') })));
  }
}

async function logOf(dir: string): Promise<string> {
  const [log] = (await readdir(dir)).filter((name) => name.endsWith('.log'));
  if (log === undefined) throw new Error(`no log in ${dir}`);
  return log;
}

async function scratchDir(): Promise<string> {
  return mkdtemp(join(tmpdir(), 'second-names-'));
}

test('a file LevelDB deletes loses one name; the sweep frees it', async () => {
  const root = await scratchDir();
  const dir = join(root, 'db');
  const db = new Level<string, string>(dir);
  await db.open();
  const names = (await SecondNames.keep(dir, NEVER))!;
  try {
    const firstLog = await logOf(dir);
    const second = join(names.linksDir, firstLog);
    assert.is(await links(join(dir, firstLog)), 2, 'the log has a second name from the start');

    await fillPastAMemtable(db);
    await until(async () => !existsSync(join(dir, firstLog)), 'LevelDB to delete its first log');
    assert.is(await links(second), 1, 'LevelDB dropped its own name only');

    const [table] = (await readdir(dir)).filter((name) => name.endsWith('.ldb'));
    assert.ok(table);
    assert.is(await links(join(dir, table)), 1);

    assert.ok(await names.sweep());
    assert.not.ok(existsSync(second), 'freed');
    assert.is(await links(join(dir, table)), 2, 'a new file gets its second name');
  } finally {
    names.stop();
    await db.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('second names a crash left behind are freed when the database opens again', async () => {
  const root = await scratchDir();
  const dir = join(root, 'db');
  const db = await openLevel(dir);
  await db.close();
  const linksDir = `${dir}.second-names`;
  await writeFile(join(linksDir, '000999.ldb'), 'a table LevelDB deleted while the service was down');

  const reopened = await openLevel(dir);
  try {
    await until(async () => !existsSync(join(linksDir, '000999.ldb')), 'the left-over name to be freed');
    assert.ok((await readdir(dir)).filter((name) => name.endsWith('.log')).every((name) => existsSync(join(linksDir, name))));
  } finally {
    await reopened.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('closing the database stops the sweeps', async () => {
  const root = await scratchDir();
  const dir = join(root, 'db');
  const db = await openLevel(dir);
  await db.close();
  const leftOver = join(`${dir}.second-names`, '000999.ldb');
  await writeFile(leftOver, 'a second name with no file in the database');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.ok(existsSync(leftOver));
  await rm(root, { recursive: true, force: true });
});

test('a second name of an older database made again in the same place is freed at open', async () => {
  const root = await scratchDir();
  const dir = join(root, 'db');
  await (await openLevel(dir)).close();
  await rm(dir, { recursive: true });
  const db = new Level<string, string>(dir);
  await db.open();
  const log = await logOf(dir);
  const stale = join(`${dir}.second-names`, log);
  await writeFile(stale, 'the older database file of that number');
  const names = (await SecondNames.keep(dir, NEVER))!;
  try {
    assert.is((await stat(stale)).ino, (await stat(join(dir, log))).ino, 'the live file has the name now');
    assert.is(await links(join(dir, log)), 2);
  } finally {
    names.stop();
    await db.close();
    await rm(root, { recursive: true, force: true });
  }
});

test.run();
