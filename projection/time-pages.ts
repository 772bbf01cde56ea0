import { inChunks, type ChunkedIterator } from '../storage/chunked-reads.js';

/** Index keys of things listed by time: `<prefix><15-digit milliseconds>!<id>`. */
export const pad = (ms: number) => String(ms).padStart(15, '0');

export const timeKey = (prefix: string, ms: number, id: string) => `${prefix}${pad(ms)}!${id}`;

/** Where a time key leads, read from the part after its prefix: `<15-digit milliseconds>!<id>`. */
export interface Position {
  at: number;
  id: string;
  /** What the index holds under the key. */
  value: string;
  /** Index entries read to reach it (1 when left out). */
  cost?: number;
}

export const positionOf = (suffix: string, value: string): Position => ({ at: Number(suffix.slice(0, 15)), id: suffix.slice(16), value });

/** The range of keys under `prefix` after the millisecond `since` (all of them without it). */
export const rangeAfter = (prefix: string, since: number | undefined) => ({
  gt: since !== undefined ? `${prefix}${pad(since)}!\uffff` : prefix,
  lt: `${prefix}\uffff`,
});

export interface TimePage<T> {
  items: T[];
  /** Pass as `since` for the next page; null when this page is the last. */
  nextSince: number | null;
}

/** At most this many index entries are read for one page. */
const SCAN_LIMIT = 5_000;

/**
 * The items of `positions` (in time order) that `accept` takes, oldest first, at most `limit` but for this:
 * a page never splits a millisecond, so it may hold more when several share the last one's, and paging by
 * `since` never skips one. Work is bounded: after SCAN_LIMIT index entries the page ends before the millisecond
 * it reached, unless that would end it before any progress (everything read shares the first millisecond):
 * then it goes on to the end of that millisecond, so that following `nextSince` always gets further.
 */
export async function pageByTime<P extends Position, T>(positions: AsyncIterable<P>, accept: (position: P) => Promise<T | undefined>, limit: number): Promise<TimePage<T>> {
  const found: { at: number; item: T }[] = [];
  let scanned = 0;
  let firstAt: number | undefined;
  for await (const position of positions) {
    const { at } = position;
    const lastAt = found.at(-1)?.at;
    if (found.length >= limit && at !== lastAt) return { items: found.map((f) => f.item), nextSince: lastAt! };
    firstAt ??= at;
    scanned += position.cost ?? 1;
    if (scanned > SCAN_LIMIT && at > firstAt) {
      return { items: found.filter((f) => f.at < at).map((f) => f.item), nextSince: at - 1 };
    }
    const item = await accept(position);
    if (item !== undefined) found.push({ at, item });
  }
  return { items: found.map((f) => f.item), nextSince: null };
}

/** The positions under one prefix of an index, in time order, read `firstChunk` at first (see `inChunks`). */
export async function* positionsUnder(
  index: { iterator(range: { gt: string; lt: string }): ChunkedIterator<[string, string]> },
  prefix: string,
  since: number | undefined,
  firstChunk: number,
): AsyncGenerator<Position> {
  for await (const entries of inChunks(index.iterator(rangeAfter(prefix, since)), firstChunk)) {
    for (const [key, value] of entries) yield positionOf(key.slice(prefix.length), value);
  }
}
