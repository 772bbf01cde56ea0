import type { Capability, Catalog } from '../registry/catalog.js';
import type { Registry } from '../registry/registry.js';
import type { RegistryItem } from '../registry/normalize.js';
import { Bm25 } from './bm25.js';
import { termsOf } from './text.js';

export type Optimize = 'cost' | 'speed' | 'reliability' | 'quality';

export interface DiscoverRequest {
  task: string;
  limit: number;
  /** micro-USD */
  maxPrice?: bigint;
  rails?: string[];
  categories?: string[];
  optimize?: Optimize;
}

/** A capability offered by one provider: what discovery ranks. */
export interface Offering {
  capability: Capability;
  item: RegistryItem;
}

/** Every capability of the catalog with each of its providers in the registry. */
export function offeringsOf(catalog: Catalog, registry: Registry): Offering[] {
  return catalog.capabilities().flatMap((capability) =>
    capability.providers.flatMap((provider) => {
      const item = provider.registryId === null ? undefined : registry.get(provider.registryId);
      return item ? [{ capability, item }] : [];
    }),
  );
}

export interface Ranked {
  rank: number;
  score: number;
  capabilityId: string;
  registryId: string;
  name: string;
  rail: RegistryItem['rail'];
  price: RegistryItem['price'];
  executable: boolean;
  blockingRequirements: string[];
  reasons: string[];
  signals: { relevance: number; quality: number; price: number; freshness: number };
}

/** How much each signal counts; relevance always leads, so the right capability comes first and the rest choose among its providers. */
const WEIGHTS: Record<Optimize | 'balanced', { relevance: number; quality: number; price: number; freshness: number }> = {
  balanced: { relevance: 0.7, quality: 0.12, price: 0.1, freshness: 0.08 },
  cost: { relevance: 0.6, quality: 0.08, price: 0.27, freshness: 0.05 },
  quality: { relevance: 0.6, quality: 0.3, price: 0.05, freshness: 0.05 },
  reliability: { relevance: 0.6, quality: 0.22, price: 0.05, freshness: 0.13 },
  speed: { relevance: 0.6, quality: 0.2, price: 0.05, freshness: 0.15 },
};
const DAY_MS = 86_400_000;
const FRESH_DAYS = 30;

/** The words an offering is found by: the capability's id, name (twice), description and tags (twice), the provider's. */
function documentOf({ capability, item }: Offering): string[] {
  return termsOf(
    [capability.id.replace(/[._]/g, ' '), capability.name, capability.name, capability.description, ...capability.tags, ...capability.tags, item.serviceName, item.description, ...item.tags].join(' '),
  );
}

const dollars = (micro: bigint) => `$${(Number(micro) / 1e6).toFixed(micro < 10_000n ? 4 : 2)}`;
const round = (value: number) => Math.round(value * 1000) / 1000;

/**
 * Ranks the offerings for a task (WALLET-DECISIONS.md, discovery): text relevance (BM25) blended with quality (payers
 * in 30 days), price (the cheapest match scores 1) and freshness (last seen); `maxPrice`, rails, categories and an
 * active status are hard filters, and an offering that matches none of the task's words is not a result.
 * `blocking` says what keeps a provider from being executed from here.
 */
export function rank(offerings: Offering[], request: DiscoverRequest, now: number, blocking: (item: RegistryItem) => string[]): Ranked[] {
  const eligible = offerings.filter(({ capability, item }) =>
    item.status === 'active' &&
    (request.maxPrice === undefined || BigInt(item.price.amount) <= request.maxPrice) &&
    (request.rails === undefined || request.rails.includes(item.rail)) &&
    (request.categories === undefined || request.categories.includes(capability.category)),
  );
  const bm25 = new Bm25(eligible.map(documentOf));
  const query = termsOf(request.task);
  const matches = eligible.map((offering, index) => ({ offering, ...bm25.score(index, query) })).filter((m) => m.score > 0);
  if (matches.length === 0) return [];
  const best = Math.max(...matches.map((m) => m.score));
  const mostPayers = Math.max(...matches.map((m) => m.offering.item.quality.uniquePayers30d));
  const cheapest = matches.map((m) => BigInt(m.offering.item.price.amount)).reduce((a, b) => (b < a ? b : a));
  const weights = WEIGHTS[request.optimize ?? 'balanced'];
  const scored = matches.map(({ offering, score, matched }) => {
    const { item, capability } = offering;
    const price = BigInt(item.price.amount);
    const ageDays = Math.max(0, (now - Date.parse(item.lastSeenAt)) / DAY_MS);
    const signals = {
      relevance: score / best,
      quality: mostPayers === 0 ? 0 : Math.log1p(item.quality.uniquePayers30d) / Math.log1p(mostPayers),
      price: price === 0n ? 1 : Number(cheapest) / Number(price),
      freshness: Math.exp(-ageDays / FRESH_DAYS),
    };
    const total = signals.relevance * weights.relevance + signals.quality * weights.quality + signals.price * weights.price + signals.freshness * weights.freshness;
    const blockingRequirements = blocking(item);
    const reasons = [
      `matches ${matched.map((term) => `"${term}"`).join(', ')} of the task`,
      `${item.quality.uniquePayers30d} payers and ${item.quality.calls30d} calls in the last 30 days`,
      `${dollars(price)} a call on ${item.rail}${price === cheapest ? ', the cheapest match' : ''}`,
      ageDays < 1 ? 'seen answering today' : `last seen ${Math.floor(ageDays)} days ago`,
    ];
    return {
      score: total,
      ranked: {
        capabilityId: capability.id,
        registryId: item.id,
        name: capability.name,
        rail: item.rail,
        price: item.price,
        executable: blockingRequirements.length === 0,
        blockingRequirements,
        reasons,
        signals: { relevance: round(signals.relevance), quality: round(signals.quality), price: round(signals.price), freshness: round(signals.freshness) },
      },
    };
  });
  scored.sort((a, b) => b.score - a.score || a.ranked.registryId.localeCompare(b.ranked.registryId));
  return scored.slice(0, request.limit).map(({ score, ranked }, index) => ({ rank: index + 1, score: round(score), ...ranked }));
}
