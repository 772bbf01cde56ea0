import { inChunks, type ChunkedIterator } from '../storage/chunked-reads.js';
import { positionOf, rangeAfter, type Position } from './time-pages.js';

/** What the intersection needs of a LevelDB (sub)level holding an index of time keys. */
interface Index {
  iterator(range: { gt: string; lt: string }): ChunkedIterator<[string, string]>;
  getMany(keys: string[]): Promise<(string | undefined)[]>;
}

/** Positions read from the leading index at a time; each batch costs one read of it and one `getMany` of the others. */
const BATCH = 64;

/**
 * The time positions present under every one of `prefixes` (after `since`), in order. The first prefix
 * leads: its keys are read in batches, and each batch's positions are looked up under the other prefixes
 * with one `getMany`. Every position of the leading index is yielded, `hit` when all the others hold it
 * too, with the index entries read to get there (`cost`), so that whoever reads it can bound its work.
 * Name the most selective prefix first.
 */
export async function* intersection(index: Index, prefixes: string[], since: number | undefined): AsyncGenerator<Position & { hit: boolean }> {
  const [lead, ...others] = prefixes;
  if (lead === undefined) return;
  for await (const entries of inChunks(index.iterator(rangeAfter(lead, since)), BATCH, BATCH)) {
    const suffixes = entries.map(([key]) => key.slice(lead.length));
    const found = others.length > 0 ? await index.getMany(others.flatMap((prefix) => suffixes.map((suffix) => prefix + suffix))) : [];
    for (const [i, suffix] of suffixes.entries()) {
      const hit = others.every((_, j) => found[j * suffixes.length + i] !== undefined);
      yield { ...positionOf(suffix, entries[i]![1]), hit, cost: 1 + others.length };
    }
  }
}
