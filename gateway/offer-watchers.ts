import type { Offer } from '../machines/offer/types.js';
import { matchesFilter, viewOf, type OfferFilter, type OfferView } from '../projection/offer-read-model.js';
import type { TimePage } from '../projection/time-pages.js';
import type { Clock } from '../runtime/clock.js';

/** Empty pages a watch reads on past before it answers with the cursor it reached (each reads at most 5,000 index entries). */
const MAX_EMPTY_PAGES = 4;

/** A search's page: each offer's JSON text. */
type Search = (filter: OfferFilter) => Promise<TimePage<string>>;

interface Watcher {
  filter: OfferFilter;
  wake: () => void;
}

/**
 * The one key a watcher waits under, from its most selective filter; an offer can wake it only if it
 * carries that key (see `keysOf`).
 */
function watchKey({ by, tags, words }: OfferFilter): string {
  if (by !== undefined) return `by!${by}`;
  if (tags[0] !== undefined) return `tag!${tags[0]}`;
  if (words[0] !== undefined) return `word!${words[0]}`;
  return 'all';
}

const keysOf = ({ offer, tags, words }: OfferView) => [`by!${offer.by}`, ...[...tags].map((t) => `tag!${t}`), ...[...words].map((w) => `word!${w}`), 'all'];

/**
 * Long polls for offers. A watcher holds its timeout and does no work while it waits: each offer published
 * anywhere reaches this node through its offer projector (`notice`), which looks only at the watchers
 * waiting under one of the offer's keys (its publisher, tags, words) and wakes those it matches; a woken
 * watcher answers with a search.
 */
export class OfferWatchers {
  private readonly waiting = new Map<string, Set<Watcher>>();
  private count = 0;

  constructor(
    private readonly search: Search,
    private readonly clock: Clock,
    /** How many may wait at once on this node. */
    readonly capacity: number,
  ) {}

  get full(): boolean {
    return this.count >= this.capacity;
  }

  /** An offer was published: wakes the watchers it may answer. */
  notice(offer: Offer): void {
    const view = viewOf(offer);
    const now = this.clock.now();
    for (const key of keysOf(view)) {
      for (const { filter, wake } of this.waiting.get(key) ?? []) {
        if (offer.listedAt > (filter.since ?? -1) && matchesFilter(view, { ...filter, now })) wake();
      }
    }
  }

  /**
   * Offers matching `filter` listed after its `since`: at once when there are any, else as soon as one is
   * listed, else none after `timeoutMs` (or when `signal` aborts: the caller went away). A search page
   * may come back empty before the end of the listing (its work is bounded): the watch then reads on from
   * where it stopped, a few pages at most, and answers with the cursor it reached.
   */
  async watch(filter: OfferFilter, timeoutMs: number, signal: AbortSignal): Promise<TimePage<string>> {
    const ends = Date.now() + timeoutMs;
    let since = filter.since;
    let emptyPages = 0;
    for (;;) {
      const from = { ...filter, ...(since !== undefined ? { since } : {}) };
      // Waiting starts before the search, so that an offer published during the search still wakes it.
      const waiting = this.waitFor(from, ends - Date.now(), signal);
      const page = await this.search({ ...from, now: this.clock.now() });
      if (page.items.length > 0) {
        waiting.cancel();
        return page;
      }
      if (page.nextSince !== null) {
        waiting.cancel();
        since = page.nextSince;
        // Reading on is bounded as a search is: past a few empty pages the client goes on from the cursor.
        if (++emptyPages >= MAX_EMPTY_PAGES || Date.now() >= ends || signal.aborted) return { items: [], nextSince: since };
        continue;
      }
      if (!(await waiting.woken)) return { items: [], nextSince: since ?? null };
    }
  }

  /** Resolves `woken` to true when a matching offer is noticed, false at the timeout or abort. */
  private waitFor(filter: OfferFilter, timeoutMs: number, signal: AbortSignal): { woken: Promise<boolean>; cancel: () => void } {
    let finish: (woken: boolean) => void = () => undefined;
    const woken = new Promise<boolean>((resolve) => {
      const watcher: Watcher = { filter, wake: () => finish(true) };
      const key = watchKey(filter);
      const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
      const onAbort = () => finish(false);
      signal.addEventListener('abort', onAbort, { once: true });
      let done = false;
      finish = (result) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.remove(key, watcher);
        resolve(result);
      };
      if (signal.aborted || timeoutMs <= 0) finish(false);
      else this.add(key, watcher);
    });
    return { woken, cancel: () => finish(false) };
  }

  private add(key: string, watcher: Watcher): void {
    let set = this.waiting.get(key);
    if (!set) this.waiting.set(key, (set = new Set()));
    set.add(watcher);
    this.count++;
  }

  private remove(key: string, watcher: Watcher): void {
    const set = this.waiting.get(key);
    if (!set?.delete(watcher)) return;
    this.count--;
    if (set.size === 0) this.waiting.delete(key);
  }
}
