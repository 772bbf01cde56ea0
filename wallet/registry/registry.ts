import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fromBazaar, fromMppDirectory, registryId, type RegistryItem } from './normalize.js';

const DATA = join(import.meta.dirname, 'shipped');
const readJson = (name: string): unknown => JSON.parse(readFileSync(join(DATA, name), 'utf8'));

export interface RegistryFilter {
  rail?: string;
  q?: string;
  network?: string;
  /** micro-USD */
  maxPrice?: bigint;
  status?: RegistryItem['status'];
}

/** Lowercase words of a text (letters and digits). */
export const wordsOf = (text: string) => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/**
 * The normalised registry of x402 and MPP providers: the snapshots shipped in `shipped/` (so it works offline), one item
 * per (service, endpoint), in a stable order. A refresh replaces a source's items; an item's health check marks it
 * `unreachable` (dropped from ranking) or active again.
 */
export class Registry {
  private items: RegistryItem[];

  constructor(items: RegistryItem[]) {
    this.items = [...items].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** The registry shipped with the service. */
  static shipped(): Registry {
    return new Registry([...fromBazaar(readJson('x402-bazaar.json') as never), ...fromMppDirectory(readJson('mpp-directory.json') as never)]);
  }

  all(): readonly RegistryItem[] {
    return this.items;
  }

  get(id: string): RegistryItem | undefined {
    return this.items.find((item) => item.id === id);
  }

  /** The item of an endpoint, by rail, method and resource. */
  find(rail: string, method: string, resource: string): RegistryItem | undefined {
    return this.get(registryId(rail, method, resource));
  }

  /** Items that pass `filter`, in the registry's order. `q` matches every word against the item's words. */
  search(filter: RegistryFilter): RegistryItem[] {
    const words = filter.q === undefined ? [] : wordsOf(filter.q);
    return this.items.filter((item) => {
      if (filter.rail !== undefined && item.rail !== filter.rail) return false;
      if (filter.network !== undefined && item.payment.network !== filter.network) return false;
      if (filter.status !== undefined && item.status !== filter.status) return false;
      if (filter.maxPrice !== undefined && BigInt(item.price.amount) > filter.maxPrice) return false;
      if (words.length === 0) return true;
      const own = new Set(wordsOf([item.serviceName, item.provider, item.description, ...item.tags, ...item.categories, item.resource].join(' ')));
      return words.every((word) => own.has(word));
    });
  }

  /**
   * Puts a source's items in place of what it gave before (an item it gave before keeps when it was first seen and
   * its last check until checked again).
   */
  replaceSource(source: string, items: RegistryItem[]): void {
    const before = new Map(this.items.filter((item) => item.source === source).map((item) => [item.id, item]));
    const kept = this.items.filter((item) => item.source !== source);
    const others = new Set(kept.map((item) => item.id));
    // An endpoint another source (the shipped snapshots included) already lists stays theirs: no source rewrites another's.
    const fresh = items.filter((item) => !others.has(item.id)).map((item) => {
      const earlier = before.get(item.id);
      return earlier ? { ...item, firstSeenAt: earlier.firstSeenAt, status: earlier.status, lastCheckedAt: earlier.lastCheckedAt } : item;
    });
    this.items = [...kept, ...fresh].sort((a, b) => a.id.localeCompare(b.id));
  }

  /** Marks an item as answering or not (its health check); `at` is when it was checked. */
  mark(id: string, status: RegistryItem['status'], at: string): void {
    this.items = this.items.map((item) => (item.id === id ? { ...item, status, lastCheckedAt: at, ...(status === 'active' ? { lastSeenAt: at } : {}) } : item));
  }
}
