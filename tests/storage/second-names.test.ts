import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Level } from 'level';
import { SecondNames, secondNamesDir } from '../../storage/second-names.js';
import { openLevel } from '../../storage/level.js';
import { until } from '../support/until.js';

const NEVER = 3_600_000;

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

/** A scratch folder (`root`, removed by the test) and the place of a database in it. */
async function scratch(): Promise<{ root: string; dir: string }> {
  const root = await mkdtemp(join(tmpdir(), 'second-names-'));
  return { root, dir: join(root, 'db') };
}

/** A LevelDB at `<scratch>/db`, opened without second names, and the folder to remove afterwards. */
async function bareDatabase(): Promise<{ root: string; dir: string; db: Level<string, string> }> {
  const { root, dir } = await scratch();
  const db = new Level<string, string>(dir);
  await db.open();
  return { root, dir, db };
}

test('a file LevelDB deletes loses one name; the sweep frees it', async () => {
  const { root, dir, db } = await bareDatabase();
  const names = (await SecondNames.keep(dir, NEVER))!;
  try {
    const firstLog = await logOf(dir);
    const second = join(secondNamesDir(dir), firstLog);
    assert.is(await links(join(dir, firstLog)), 2, 'the log has a second name from the start');

    await fillPastAMemtable(db);
    await until(() => !existsSync(join(dir, firstLog)), 'LevelDB to delete its first log', 10_000, 20);
    assert.is(await links(second), 1, 'LevelDB dropped its own name only');
    const [table] = (await readdir(dir)).filter((name) => name.endsWith('.ldb'));
    assert.ok(table);
    assert.is(await links(join(dir, table)), 1);

    await names.sweep();
    assert.not.ok(existsSync(second), 'freed');
    assert.is(await links(join(dir, table)), 2, 'a new file gets its second name');
    assert.is((await db.get('k0-0'))?.length, 4096, 'the data reads as before');
  } finally {
    await names.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('at open, a second name is freed if its file is gone, replaced if another file has its name, kept if it is the file', async () => {
  const { root, dir, db } = await bareDatabase();
  const log = await logOf(dir);
  const [current] = (await readdir(dir)).filter((name) => name.startsWith('MANIFEST'));
  await mkdir(secondNamesDir(dir));
  await writeFile(join(secondNamesDir(dir), '000999.ldb'), 'a table LevelDB deleted while the service was down');
  await writeFile(join(secondNamesDir(dir), log), 'an older file that had the number of the live log');
  const names = (await SecondNames.keep(dir, NEVER))!;
  try {
    assert.not.ok(existsSync(join(secondNamesDir(dir), '000999.ldb')));
    assert.is((await stat(join(secondNamesDir(dir), log))).ino, (await stat(join(dir, log))).ino);
    assert.ok(current, 'a manifest is not one of the files LevelDB deletes after compactions');
    assert.not.ok(existsSync(join(secondNamesDir(dir), current)));

    const before = (await stat(join(secondNamesDir(dir), log))).ino;
    await names.close();
    const again = (await SecondNames.keep(dir, NEVER))!;
    await again.close();
    assert.is((await stat(join(secondNamesDir(dir), log))).ino, before, 'a second name of the file itself stays');
    assert.is(await links(join(dir, log)), 2);
  } finally {
    await names.close();
    await db.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('deleting a database deletes its second names; opening it again makes them again', async () => {
  const { root, dir } = await scratch();
  const db = await openLevel(dir);
  await db.close();
  await rm(dir, { recursive: true });
  assert.equal(await readdir(root), []);
  const again = await openLevel(dir);
  try {
    assert.is(await links(join(dir, await logOf(dir))), 2);
  } finally {
    await again.close();
    await rm(root, { recursive: true, force: true });
  }
});

/** Runs `body` with console.error collected instead of printed. */
async function logging<T>(body: (lines: string[]) => Promise<T>): Promise<T> {
  const printed = console.error;
  const lines: string[] = [];
  console.error = (...parts: unknown[]) => void lines.push(parts.join(' '));
  try {
    return await body(lines);
  } finally {
    console.error = printed;
  }
}

test('where second names cannot be kept, the database opens and works without them', async () => {
  const { root, dir } = await scratch();
  await mkdir(dir);
  await writeFile(secondNamesDir(dir), 'a file where the folder would go');
  try {
    await logging(async (lines) => {
      const db = await openLevel(dir);
      await db.put('a', 1);
      assert.is(await db.get('a'), 1);
      assert.is(await links(join(dir, await logOf(dir))), 1);
      assert.ok(lines.some((line) => line.includes('no second names')), lines.join('\n'));
      await db.close();
    });
  } finally {
    await rm(root, { recursive: true, force: true });
  }
});

test('a second name that cannot be freed is logged once and holds up no other', async () => {
  const { root, dir, db } = await bareDatabase();
  await mkdir(join(secondNamesDir(dir), '000998.ldb'), { recursive: true }); // a folder: unlink fails
  await writeFile(join(secondNamesDir(dir), '000999.ldb'), 'a table LevelDB deleted');
  try {
    await logging(async (lines) => {
      const names = (await SecondNames.keep(dir, NEVER))!;
      assert.ok(names, 'kept all the same');
      assert.not.ok(existsSync(join(secondNamesDir(dir), '000999.ldb')));
      assert.is(await links(join(dir, await logOf(dir))), 2);
      await names.sweep();
      assert.is(lines.length, 1, lines.join('\n'));
      assert.match(lines[0]!, '000998.ldb');
      await names.close();
    });
  } finally {
    await db.close();
    await rm(root, { recursive: true, force: true });
  }
});

test('closing the database stops the sweeps', async () => {
  const { root, dir } = await scratch();
  const db = await openLevel(dir);
  await db.close();
  const leftOver = join(secondNamesDir(dir), '000999.ldb');
  await writeFile(leftOver, 'a second name with no file in the database');
  await new Promise((resolve) => setTimeout(resolve, 700));
  assert.ok(existsSync(leftOver));
  await rm(root, { recursive: true, force: true });
});

test.run();
