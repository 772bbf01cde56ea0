import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RegistryItem } from './normalize.js';
import { wordsOf, type Registry } from './registry.js';

type Usd = { amount: string; asset: 'USD' };

/** A capability: what an agent can ask for, and the registry's providers that do it. */
export interface Capability {
  id: string;
  name: string;
  description: string;
  category: string;
  tags: string[];
  inputSchema: Record<string, unknown>;
  outputSchema: Record<string, unknown>;
  pricing: { mode: 'fixed' | 'dynamic'; price: Usd; maxPrice: Usd };
  providers: { registryId: string; rail: RegistryItem['rail']; price: Usd; status: RegistryItem['status'] }[];
  /** `active` while a provider answers. */
  status: 'active' | 'unavailable';
}

interface CatalogFile {
  version: string;
  updatedAt: string;
  capabilities: (Omit<Capability, 'pricing' | 'providers' | 'status'> & { providers: { rail: string; method: string; resource: string }[] })[];
}

const usd = (amount: bigint): Usd => ({ amount: amount.toString(), asset: 'USD' });

/**
 * The capability catalog shipped in `data/catalog.json`, each capability's providers resolved in the registry: its
 * price is its cheapest active provider's (`fixed` with one price, `dynamic` when the providers differ).
 */
export class Catalog {
  readonly version: string;
  readonly updatedAt: string;
  private readonly file: CatalogFile;

  constructor(private readonly registry: Registry) {
    this.file = JSON.parse(readFileSync(join(import.meta.dirname, 'data', 'catalog.json'), 'utf8')) as CatalogFile;
    this.version = this.file.version;
    this.updatedAt = this.file.updatedAt;
  }

  capabilities(): Capability[] {
    return this.file.capabilities.map((entry) => {
      const items = entry.providers.map((p) => this.registry.find(p.rail, p.method, p.resource)).filter((item): item is RegistryItem => item !== undefined);
      const active = items.filter((item) => item.status === 'active');
      const prices = (active.length > 0 ? active : items).map((item) => BigInt(item.price.amount));
      const low = prices.reduce((a, b) => (b < a ? b : a), prices[0] ?? 0n);
      const high = prices.reduce((a, b) => (b > a ? b : a), prices[0] ?? 0n);
      return {
        ...entry,
        pricing: { mode: low === high ? 'fixed' : 'dynamic', price: usd(low), maxPrice: usd(high) },
        providers: items.map((item) => ({ registryId: item.id, rail: item.rail, price: item.price as Usd, status: item.status })),
        status: active.length > 0 ? 'active' : 'unavailable',
      };
    });
  }

  get(id: string): Capability | undefined {
    return this.capabilities().find((capability) => capability.id === id);
  }

  /** Capabilities of `category`, and whose words hold every word of `q`. */
  search(filter: { category?: string; q?: string }): Capability[] {
    const words = filter.q === undefined ? [] : wordsOf(filter.q);
    return this.capabilities().filter((capability) => {
      if (filter.category !== undefined && capability.category !== filter.category) return false;
      const own = new Set(wordsOf([capability.id, capability.name, capability.description, ...capability.tags].join(' ')));
      return words.every((word) => own.has(word));
    });
  }
}
