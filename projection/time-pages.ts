/** Index keys of things listed by time: `<prefix><15-digit milliseconds>!<id>`. */
export const pad = (ms: number) => String(ms).padStart(15, '0');

export const timeKey = (prefix: string, ms: number, id: string) => `${prefix}${pad(ms)}!${id}`;

/** What a page is read from: an index of time keys (to the id), and how to load and judge each item. */
export interface TimeIndex<T> {
  entries(range: { gt: string; lt: string }): AsyncIterable<[string, string]>;
  load(id: string): Promise<T | undefined>;
  matches(item: T): boolean;
}

export interface TimePage<T> {
  items: T[];
  /** Pass as `since` for the next page; null when this page is the last. */
  nextSince: number | null;
}

/** At most this many index entries are read for one page. */
const SCAN_LIMIT = 5_000;

/**
 * Items under `prefix` whose time is after `since`, oldest first, that match. A page never splits a
 * millisecond: it may hold more than `limit` items when several share the last one's, so paging by `since`
 * never skips one. Work is bounded: after SCAN_LIMIT index entries the page ends before the millisecond it
 * reached, unless that would end it before any progress (everything scanned shares the first millisecond):
 * then it goes on to the end of that millisecond, so that following `nextSince` always gets further.
 */
export async function pageByTime<T>(index: TimeIndex<T>, prefix: string, since: number | undefined, limit: number): Promise<TimePage<T>> {
  const start = since !== undefined ? `${prefix}${pad(since)}!\uffff` : prefix;
  const found: { at: number; item: T }[] = [];
  let scanned = 0;
  let firstAt: number | undefined;
  for await (const [key, id] of index.entries({ gt: start, lt: `${prefix}\uffff` })) {
    const at = Number(key.slice(prefix.length, prefix.length + 15));
    const lastAt = found.at(-1)?.at;
    if (found.length >= limit && at !== lastAt) return { items: found.map((f) => f.item), nextSince: lastAt! };
    firstAt ??= at;
    if (++scanned > SCAN_LIMIT && at > firstAt) {
      return { items: found.filter((f) => f.at < at).map((f) => f.item), nextSince: at - 1 };
    }
    const item = await index.load(id);
    if (item !== undefined && index.matches(item)) found.push({ at, item });
  }
  return { items: found.map((f) => f.item), nextSince: null };
}
