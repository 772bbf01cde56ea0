import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import { join } from 'node:path';
import type { ExecutionRail } from '../../machines/wallet/types.js';
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
  /** Registry providers (x402, mpp), and plain HTTP ones the catalog prices itself (`registryId` null). */
  providers: CapabilityProvider[];
  /** `active` while a provider answers. */
  status: 'active' | 'unavailable';
}

export interface CapabilityProvider {
  registryId: string | null;
  rail: ExecutionRail;
  resource: string;
  method: string;
  price: Usd;
  /** Where its payment goes on the wire (null for plain HTTP and the mock: nothing is paid there). */
  network: string | null;
  asset: string | null;
  status: RegistryItem['status'];
}

/** A capability as the catalog file holds it: its providers by endpoint (a plain HTTP one with its own price). */
export type CatalogEntry = Omit<Capability, 'pricing' | 'providers' | 'status'> & { providers: { rail: string; method: string; resource: string; price?: string }[] };

interface CatalogFile {
  version: string;
  updatedAt: string;
  capabilities: CatalogEntry[];
}

const usd = (amount: bigint): Usd => ({ amount: amount.toString(), asset: 'USD' });

const schemaCompiler = new Ajv({ strict: false, validateFormats: false });
const MICRO_USD = /^(0|[1-9][0-9]{0,29})$/;
const METHODS: ReadonlySet<unknown> = new Set(['GET', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** What is wrong with a catalog entry from a file, if anything: the shape the catalog and the execution route rely on. */
function entryProblem(entry: Partial<CatalogEntry>): string | undefined {
  if (typeof entry.id !== 'string' || !/^[a-z0-9]+([._-][a-z0-9]+)*$/.test(entry.id)) return 'id is not a dotted slug';
  for (const field of ['name', 'description', 'category'] as const) if (typeof entry[field] !== 'string') return `${field} is not text`;
  if (!Array.isArray(entry.tags) || !entry.tags.every((tag) => typeof tag === 'string')) return 'tags are not a list of text';
  if (typeof entry.inputSchema !== 'object' || entry.inputSchema === null) return 'inputSchema is not an object';
  if (typeof entry.outputSchema !== 'object' || entry.outputSchema === null) return 'outputSchema is not an object';
  try {
    schemaCompiler.compile(entry.inputSchema);
  } catch (error) {
    return `inputSchema is no JSON schema: ${String(error)}`;
  }
  if (!Array.isArray(entry.providers) || entry.providers.length === 0) return 'providers are not a list';
  for (const provider of entry.providers) {
    if (!['http', 'x402', 'mpp'].includes(provider?.rail) || !METHODS.has(provider.method) || typeof provider.resource !== 'string' || !URL.canParse(provider.resource)) return 'a provider needs a rail (http, x402, mpp), a method (GET, POST, PUT, PATCH, DELETE) and a resource URL';
    if (provider.rail === 'http' && !MICRO_USD.test(provider.price ?? '')) return 'a plain HTTP provider needs its price in micro-USD';
  }
  return undefined;
}

/**
 * The capability catalog shipped in `shipped/catalog.json`, each capability's providers resolved in the registry: its
 * price is its cheapest active provider's (`fixed` with one price, `dynamic` when the providers differ).
 */
export class Catalog {
  readonly version: string;
  readonly updatedAt: string;
  private readonly file: CatalogFile;

  /** `extra`: capabilities beside the shipped ones (the test hooks' `test.echo`). */
  constructor(
    private readonly registry: Registry,
    extra: CatalogEntry[] = [],
  ) {
    const shipped = JSON.parse(readFileSync(join(import.meta.dirname, 'shipped', 'catalog.json'), 'utf8')) as CatalogFile;
    this.file = { ...shipped, capabilities: [...shipped.capabilities, ...extra] };
    const ids = this.file.capabilities.map((capability) => capability.id);
    const twice = ids.find((id, index) => ids.indexOf(id) !== index);
    if (twice !== undefined) throw new Error(`the catalog has two capabilities ${twice}`);
    this.version = this.file.version;
    this.updatedAt = this.file.updatedAt;
  }

  /** The capabilities of a deployment's own catalog file (WALLET_CATALOG_FILE); none without one. A file not understood stops the start, naming what is wrong. */
  static entriesOf(file: string | undefined): CatalogEntry[] {
    if (file === undefined) return [];
    let capabilities: unknown;
    try {
      ({ capabilities } = JSON.parse(readFileSync(file, 'utf8')) as { capabilities?: unknown });
    } catch (error) {
      throw new Error(`${file} is not a readable JSON catalog: ${String(error)}`);
    }
    if (!Array.isArray(capabilities)) throw new Error(`${file} holds no { "capabilities": [...] }`);
    capabilities.forEach((entry, index) => {
      const problem = entryProblem(entry as Partial<CatalogEntry>);
      if (problem) throw new Error(`${file}: capability ${index} (${String((entry as { id?: unknown })?.id)}): ${problem}`);
    });
    return capabilities as CatalogEntry[];
  }

  capabilities(): Capability[] {
    return this.file.capabilities.map((entry) => {
      const providers = entry.providers.flatMap((p): CapabilityProvider[] => {
        if (p.rail === 'http' || p.rail === 'mock') return [{ registryId: null, rail: p.rail, resource: p.resource, method: p.method, price: usd(BigInt(p.price ?? '0')), network: null, asset: null, status: 'active' }];
        const item = this.registry.find(p.rail, p.method, p.resource);
        return item ? [{ registryId: item.id, rail: item.rail, resource: item.resource, method: item.method, price: item.price as Usd, network: item.payment.network, asset: item.payment.asset, status: item.status }] : [];
      });
      const active = providers.filter((provider) => provider.status === 'active');
      const prices = (active.length > 0 ? active : providers).map((provider) => BigInt(provider.price.amount));
      const low = prices.reduce((a, b) => (b < a ? b : a), prices[0] ?? 0n);
      const high = prices.reduce((a, b) => (b > a ? b : a), prices[0] ?? 0n);
      return {
        ...entry,
        pricing: { mode: low === high ? 'fixed' : 'dynamic', price: usd(low), maxPrice: usd(high) },
        providers,
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
