import { Level } from 'level';
import { SecondNames } from './second-names.js';

export type JsonLevel = Level<string, unknown>;
export type Sublevel<V> = ReturnType<JsonLevel['sublevel']> & { get(key: string): Promise<V | undefined> };

/**
 * LevelDB keeps this many table files open, each memory-mapped (the pages it reads count in the RSS) or,
 * past 1,000 maps, with its index and filter blocks on the heap: the default of 1,000 held some 90 MiB of
 * mapped pages with 1,000,000 pacts stored. A table not held is opened again when read (a few reads).
 */
const OPEN_TABLES = 128;

/**
 * Opens a LevelDB (the node's: the read model and the Agent Stream's store; the mock rail's; the blob index).
 * One process owns a directory. `writeBufferBytes`: the size of its memtable (LevelDB's default 4 MiB); a
 * busy database wants more (PACT_LEVELDB_WRITE_BUFFER_BYTES, docs/ARCHITECTURE.md, Speed).
 */
export async function openLevel(dir: string, { writeBufferBytes }: { writeBufferBytes?: number } = {}): Promise<JsonLevel> {
  // Left out, not undefined: classic-level reads an undefined size as whatever is in memory.
  const writeBuffer = writeBufferBytes === undefined ? {} : { writeBufferSize: writeBufferBytes };
  const db = new Level<string, unknown>(dir, { valueEncoding: 'json', maxOpenFiles: OPEN_TABLES, ...writeBuffer });
  await db.open();
  const secondNames = await SecondNames.keep(dir);
  if (secondNames) db.attachResource(secondNames); // closed, and its sweep ended, before the database closes
  return db;
}

/**
 * The value of `key` in a sublevel, read synchronously through the database it belongs to: a sublevel made
 * after its database opened opens itself a tick later, and its own `getSync` throws until then. For string
 * keys (the prefix is the sublevel's whole path, nested or not); `valueEncoding` must be the sublevel's.
 */
export function readNow<V>(
  db: JsonLevel,
  sublevel: { prefixKey(key: string, keyFormat: 'utf8'): string },
  key: string,
  options: { valueEncoding: 'utf8' | 'json'; snapshot?: ReturnType<JsonLevel['snapshot']> },
): V | undefined {
  return db.getSync<string, V>(sublevel.prefixKey(key, 'utf8'), options);
}
