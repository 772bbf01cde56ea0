import type { Offer } from '../machines/offer/types.js';
import { matchesAll, type OfferFilter } from '../projection/offer-read-model.js';
import type { TimePage } from '../projection/time-pages.js';
import type { Clock } from '../runtime/clock.js';

/** A search's page: each offer's JSON text. */
type Search = (filter: OfferFilter) => Promise<TimePage<string>>;

interface Watcher {
  filter: OfferFilter;
  wake: () => void;
}

/**
 * Long polls for offers. A watcher holds no timer but its timeout and does no work while it waits: each
 * offer published anywhere reaches this node through its offer projector (`notice`), which wakes only the
 * watchers whose filters it matches; a woken watcher answers with a search.
 */
export class OfferWatchers {
  private readonly waiting = new Set<Watcher>();

  constructor(
    private readonly search: Search,
    private readonly clock: Clock,
    /** How many may wait at once on this node. */
    readonly capacity: number,
  ) {}

  get full(): boolean {
    return this.waiting.size >= this.capacity;
  }

  /** An offer was published: wakes the watchers it may answer. */
  notice(offer: Offer): void {
    for (const watcher of this.waiting) {
      const { filter } = watcher;
      if (offer.publishedAt > (filter.since ?? -1) && matchesAll(offer, { ...filter, now: this.clock.now() })) watcher.wake();
    }
  }

  /**
   * Offers matching `filter` newer than its `since`: at once when there are any, else as soon as one is
   * published, else none after `timeoutMs` (or when `signal` aborts: the caller went away).
   */
  async watch(filter: OfferFilter, timeoutMs: number, signal: AbortSignal): Promise<TimePage<string>> {
    const none: TimePage<string> = { items: [], nextSince: filter.since ?? null };
    const ends = Date.now() + timeoutMs;
    for (;;) {
      // Waiting starts before the search, so that an offer published during the search still wakes it.
      const waiting = this.waitFor(filter, ends - Date.now(), signal);
      const page = await this.search({ ...filter, now: this.clock.now() });
      if (page.items.length > 0) {
        waiting.cancel();
        return page;
      }
      if (!(await waiting.woken)) return none;
    }
  }

  /** Resolves `woken` to true when a matching offer is noticed, false at the timeout or abort. */
  private waitFor(filter: OfferFilter, timeoutMs: number, signal: AbortSignal): { woken: Promise<boolean>; cancel: () => void } {
    let finish: (woken: boolean) => void = () => undefined;
    const woken = new Promise<boolean>((resolve) => {
      const watcher: Watcher = { filter, wake: () => finish(true) };
      const timer = setTimeout(() => finish(false), Math.max(0, timeoutMs));
      const onAbort = () => finish(false);
      signal.addEventListener('abort', onAbort, { once: true });
      finish = (result) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        this.waiting.delete(watcher);
        resolve(result);
      };
      if (signal.aborted || timeoutMs <= 0) finish(false);
      else this.waiting.add(watcher);
    });
    return { woken, cancel: () => finish(false) };
  }
}
