import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { MICRO_USD_DECIMALS, microUsdOf } from '../usd-units.js';

/** One payable endpoint of a provider, as the registry lists it (WALLET-DECISIONS.md, "Catalog, registry, discovery"). */
export interface RegistryItem {
  id: string;
  rail: 'x402' | 'mpp';
  source: string;
  serviceName: string;
  provider: string;
  resource: string;
  method: string;
  description: string;
  tags: string[];
  categories: string[];
  payment: { scheme?: string; intent?: string; network: string; asset: string; decimals: number; amount: string; payTo: string };
  /** What one call costs, in micro-USD (the token is a 6-decimal USD stablecoin). */
  price: { amount: string; asset: 'USD' };
  input: unknown;
  quality: { calls30d: number; uniquePayers30d: number; lastCalledAt: string | null };
  status: 'active' | 'unreachable';
  firstSeenAt: string;
  lastSeenAt: string;
  lastCheckedAt: string | null;
}

/** A registry item's id: the same endpoint (rail, method, resource) always has the same one. */
export const registryId = (rail: string, method: string, resource: string) =>
  `rg_${bs58.encode(createHash('sha256').update(`${rail}\n${method.toUpperCase()}\n${resource}`).digest()).slice(0, 20)}`;

const strings = (value: unknown): string[] => (Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : []);
const text = (value: unknown, fallback = ''): string => (typeof value === 'string' ? value : fallback);
const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.floor(value) : 0);
/** A decimal string ("0.003") as base units of `decimals`; undefined when it is no such amount. */
function baseUnits(amount: string, decimals: number): bigint | undefined {
  const match = /^(\d{1,30})(?:\.(\d{1,36}))?$/.exec(amount);
  if (!match) return undefined;
  const fraction = match[2] ?? '';
  if (fraction.length > decimals) return undefined;
  return BigInt(match[1]! + fraction.padEnd(decimals, '0'));
}

function quality(value: unknown): RegistryItem['quality'] {
  const q = (value ?? {}) as Record<string, unknown>;
  return { calls30d: count(q.calls30d), uniquePayers30d: count(q.uniquePayers30d), lastCalledAt: typeof q.lastCalledAt === 'string' ? q.lastCalledAt : null };
}

/**
 * x402 Bazaar discovery resources (`/discovery/resources` of a facilitator): one item per resource, paid by its
 * first `exact` requirement (v2 `amount`, v1 `maxAmountRequired`). Anything not understood is left out.
 */
export function fromBazaar(snapshot: { source?: unknown; fetchedAt?: unknown; items?: unknown }): RegistryItem[] {
  const source = text(snapshot.source, 'x402-bazaar');
  const seen = text(snapshot.fetchedAt, new Date(0).toISOString());
  return (Array.isArray(snapshot.items) ? snapshot.items : []).flatMap((raw): RegistryItem[] => {
    const item = raw as Record<string, unknown>;
    const resource = text(item.resource);
    const accept = (Array.isArray(item.accepts) ? item.accepts : []).find((a) => (a as { scheme?: unknown })?.scheme === 'exact') as Record<string, unknown> | undefined;
    const amount = text(accept?.amount, text(accept?.maxAmountRequired));
    if (!resource || !accept || !/^\d{1,30}$/.test(amount)) return [];
    const info = ((item.extensions as { bazaar?: { info?: Record<string, unknown> } } | undefined)?.bazaar?.info ?? {}) as Record<string, unknown>;
    const input = (info.input ?? null) as { method?: unknown } | null;
    const method = text(input?.method, 'GET').toUpperCase();
    const price = BigInt(amount);
    const host = URL.canParse(resource) ? new URL(resource).host : resource;
    return [{
      id: registryId('x402', method, resource),
      rail: 'x402',
      source,
      serviceName: text(item.serviceName, host),
      provider: host,
      resource,
      method,
      description: text(item.description),
      tags: strings(item.tags),
      categories: strings(info.categories),
      payment: { scheme: 'exact', network: text(accept.network), asset: text(accept.asset), decimals: MICRO_USD_DECIMALS, amount, payTo: text(accept.payTo) },
      price: { amount: price.toString(), asset: 'USD' },
      input,
      quality: quality(item.quality),
      status: 'active',
      firstSeenAt: text(item.lastUpdated, seen),
      lastSeenAt: seen,
      lastCheckedAt: null,
    }];
  });
}

/** An MPP directory's service definitions: one item per endpoint (`charge` intent), priced in the token's decimal units. */
export function fromMppDirectory(snapshot: { source?: unknown; fetchedAt?: unknown; services?: unknown }): RegistryItem[] {
  const source = text(snapshot.source, 'mpp-directory');
  const seen = text(snapshot.fetchedAt, new Date(0).toISOString());
  return (Array.isArray(snapshot.services) ? snapshot.services : []).flatMap((raw) => {
    const service = raw as Record<string, unknown>;
    const base = text(service.baseUrl);
    return (Array.isArray(service.endpoints) ? service.endpoints : []).flatMap((rawEndpoint): RegistryItem[] => {
      const endpoint = rawEndpoint as Record<string, unknown>;
      const decimals = count(endpoint.decimals);
      const units = baseUnits(text(endpoint.amount), decimals);
      const price = units === undefined ? undefined : microUsdOf(units, decimals);
      const resource = base + text(endpoint.path);
      if (!base || price === undefined || !URL.canParse(resource)) return [];
      const method = text(endpoint.method, 'POST').toUpperCase();
      return [{
        id: registryId('mpp', method, resource),
        rail: 'mpp',
        source,
        serviceName: text(service.name, new URL(resource).host),
        provider: text(service.provider, new URL(resource).host),
        resource,
        method,
        description: text(endpoint.description),
        tags: strings(service.tags),
        categories: strings(service.categories),
        payment: { intent: text(endpoint.intent, 'charge'), network: text(endpoint.network), asset: text(endpoint.currency), decimals, amount: (units ?? 0n).toString(), payTo: text(endpoint.recipient) },
        price: { amount: price.toString(), asset: 'USD' },
        input: endpoint.input ?? null,
        quality: quality(service.quality),
        status: 'active',
        firstSeenAt: text(service.firstSeenAt, seen),
        lastSeenAt: text(service.lastSeenAt, seen),
        lastCheckedAt: null,
      }];
    });
  });
}
