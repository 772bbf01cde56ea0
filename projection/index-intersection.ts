import { positionOf, rangeAfter, type Position } from './time-pages.js';

/** What an index cursor needs of a LevelDB (sub)level's iterator. */
interface SeekableIterator {
  next(): Promise<[string, string] | undefined>;
  seek(target: string): void;
  close(): Promise<void>;
}
interface Index {
  iterator(range: { gt: string; lt: string }): SeekableIterator;
}

/** One prefix of an index, read in key order; `suffix` is the current key without the prefix. */
class Cursor {
  suffix: string | undefined;
  value = '';

  constructor(
    private readonly iterator: SeekableIterator,
    private readonly prefix: string,
  ) {}

  async next(): Promise<void> {
    const entry = await this.iterator.next();
    this.suffix = entry?.[0].slice(this.prefix.length);
    this.value = entry?.[1] ?? '';
  }

  close(): Promise<void> {
    return this.iterator.close();
  }

  /** Moves to the first key at or after `suffix`. */
  async seek(suffix: string): Promise<void> {
    this.iterator.seek(this.prefix + suffix);
    await this.next();
  }
}

/**
 * The time positions present under every one of `prefixes` (after `since`), in order: a merge of sorted
 * keys that seeks each index to the furthest key the others reached, so it reads little of a large index
 * that a small one rules out. Besides each match (`hit`), it yields the positions it passes on the way,
 * each with the index entries read to get there (`cost`), so that whoever reads it can bound its work.
 */
export async function* intersection(index: Index, prefixes: string[], since: number | undefined): AsyncGenerator<Position & { hit: boolean }> {
  const cursors = prefixes.map((prefix) => new Cursor(index.iterator(rangeAfter(prefix, since)), prefix));
  try {
    await Promise.all(cursors.map((cursor) => cursor.next()));
    let cost = cursors.length; // index entries read since the last position yielded
    for (;;) {
      if (cursors.some((cursor) => cursor.suffix === undefined)) return;
      const furthest = cursors.reduce((max, cursor) => (cursor.suffix! > max ? cursor.suffix! : max), '');
      const behind = cursors.filter((cursor) => cursor.suffix !== furthest);
      const hit = behind.length === 0;
      yield { ...positionOf(furthest, hit ? cursors[0]!.value : ''), hit, cost };
      const moving = hit ? cursors : behind;
      await Promise.all(moving.map((cursor) => (hit ? cursor.next() : cursor.seek(furthest))));
      cost = moving.length;
    }
  } finally {
    await Promise.all(cursors.map((cursor) => cursor.close()));
  }
}
