import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../runtime/clock.js';
import { offeringsOf, rank, type Optimize } from '../discovery/rank.js';
import { walletError } from '../errors.js';
import type { Catalog } from '../registry/catalog.js';
import type { RegistryItem } from '../registry/normalize.js';
import type { Registry } from '../registry/registry.js';
import { sendWalletError } from '../reply.js';
import { isoTime } from '../views.js';

export interface DiscoveryRouteDeps {
  registry: Registry;
  catalog: Catalog;
  clock: Clock;
  /** What keeps a provider from being executed from this server (none: executable). */
  blocking: (item: RegistryItem) => string[];
}

const microUsd = { type: 'string', pattern: '^(0|[1-9][0-9]{0,29})$' } as const;
const usd = { type: 'object', required: ['amount', 'asset'], additionalProperties: false, properties: { amount: microUsd, asset: { const: 'USD' } } } as const;
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;
const catalogQuery = { type: 'object', additionalProperties: false, properties: { category: text(64), q: text(200) } } as const;
const registryQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    rail: { enum: ['x402', 'mpp'] },
    q: text(200),
    network: text(64),
    maxPrice: { ...microUsd, description: 'micro-USD' },
    status: { enum: ['active', 'unreachable'] },
    limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' },
    cursor: { type: 'string', maxLength: 40 },
  },
} as const;
const discoverBody = {
  type: 'object',
  required: ['task'],
  additionalProperties: false,
  properties: {
    task: { type: 'string', maxLength: 2000 },
    limit: { type: 'integer', minimum: 1, maximum: 50 },
    maxPrice: usd,
    rails: { type: 'array', maxItems: 2, items: { enum: ['x402', 'mpp'] } },
    categories: { type: 'array', maxItems: 20, items: text(64) },
    optimize: { enum: ['cost', 'speed', 'reliability', 'quality'] },
  },
} as const;

type RegistryQuery = { rail?: 'x402' | 'mpp'; q?: string; network?: string; maxPrice?: string; status?: RegistryItem['status']; limit?: string; cursor?: string };
type DiscoverBody = { task: string; limit?: number; maxPrice?: { amount: string }; rails?: string[]; categories?: string[]; optimize?: Optimize };

/** A registry page cursor: opaque to clients, the position of the next item. */
const cursorOf = (position: number) => Buffer.from(`r${position}`).toString('base64url');
function positionOf(cursor: string): number | undefined {
  const match = /^r(0|[1-9][0-9]{0,8})$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match ? Number(match[1]) : undefined;
}

/** `GET /v1/catalog`, `GET /v1/registry` and `POST /v1/discover`: no bearer, read only. */
export function registerDiscoveryRoutes(app: FastifyInstance, deps: DiscoveryRouteDeps): void {
  const { registry, catalog } = deps;

  app.get<{ Querystring: { category?: string; q?: string } }>('/v1/catalog', { schema: { operationId: 'getCatalog', querystring: catalogQuery } }, async (request) => ({
    version: catalog.version,
    updatedAt: catalog.updatedAt,
    capabilities: catalog.search(request.query),
  }));

  app.get<{ Querystring: RegistryQuery }>('/v1/registry', { schema: { operationId: 'getRegistry', querystring: registryQuery } }, async (request, reply) => {
    const { limit, cursor, maxPrice, ...filter } = request.query;
    const from = cursor === undefined ? 0 : positionOf(cursor);
    if (from === undefined) return sendWalletError(reply, walletError('invalid_request', 'cursor is not one this service gave', { field: 'cursor' }));
    const found = registry.search({ ...filter, ...(maxPrice !== undefined ? { maxPrice: BigInt(maxPrice) } : {}) });
    const size = limit === undefined ? 50 : Number(limit);
    const items = found.slice(from, from + size);
    return { items, nextCursor: from + size < found.length ? cursorOf(from + size) : null };
  });

  app.post<{ Body: DiscoverBody }>('/v1/discover', { schema: { operationId: 'discoverCapabilities', body: discoverBody } }, async (request, reply) => {
    const body = request.body;
    if (body.task.trim() === '') return sendWalletError(reply, walletError('invalid_request', 'say what the task is', { field: 'task' }));
    const offerings = offeringsOf(catalog, registry);
    const now = deps.clock.now();
    const results = rank(
      offerings,
      {
        task: body.task,
        limit: body.limit ?? 10,
        ...(body.maxPrice ? { maxPrice: BigInt(body.maxPrice.amount) } : {}),
        ...(body.rails ? { rails: body.rails } : {}),
        ...(body.categories ? { categories: body.categories } : {}),
        ...(body.optimize ? { optimize: body.optimize } : {}),
      },
      now,
      deps.blocking,
    );
    return { task: body.task, results, rankedAt: isoTime(now) };
  });
}
