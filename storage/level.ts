import { Level } from 'level';

export type JsonLevel = Level<string, unknown>;
export type Sublevel<V> = ReturnType<JsonLevel['sublevel']> & { get(key: string): Promise<V | undefined> };

/** Opens the node's LevelDB (snapshots and the read model). One process owns a directory. */
export async function openLevel(dir: string): Promise<JsonLevel> {
  const db = new Level<string, unknown>(dir, { valueEncoding: 'json' });
  await db.open();
  return db;
}
