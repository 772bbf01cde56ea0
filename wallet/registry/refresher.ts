import { PeriodicPass } from '../../actors/periodic-pass.js';
import { outboundFetch, readAtMost } from '../public-network.js';
import { fromBazaar, fromMppDirectory, type RegistryItem } from './normalize.js';
import type { Registry } from './registry.js';

/** Where a registry source is read from (WALLET_REGISTRY_SOURCES). */
export interface RegistrySource {
  kind: 'x402-bazaar' | 'mpp-directory';
  url: string;
}

const FETCH_TIMEOUT_MS = 10_000;
const PROBE_TIMEOUT_MS = 5_000;
const MAX_SOURCE_BYTES = 5 * 1024 * 1024;
const CHECKS_AT_ONCE = 8;

/** `x402-bazaar=<url>,mpp-directory=<url>`: the sources to refresh the registry from. */
export function parseSources(text: string | undefined): RegistrySource[] {
  if (!text) return [];
  return text.split(',').map((part) => {
    const [kind, url] = part.trim().split(/=(.*)/s) as [string, string | undefined];
    if ((kind !== 'x402-bazaar' && kind !== 'mpp-directory') || !url || !URL.canParse(url)) {
      throw new Error(`WALLET_REGISTRY_SOURCES: "${part}" is not x402-bazaar=<url> or mpp-directory=<url>`);
    }
    return { kind, url };
  });
}

/** A source's document, read with a time limit and no more than MAX_SOURCE_BYTES of it. */
async function fetchSource(url: string, allowPrivate: boolean): Promise<unknown> {
  const response = await outboundFetch(allowPrivate)(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' }, redirect: 'manual' });
  if (!response.ok) {
    response.body?.cancel().catch(() => undefined);
    throw new Error(`${url} answered ${response.status}`);
  }
  return JSON.parse(await readAtMost(response, MAX_SOURCE_BYTES));
}

/** Whether an endpoint answers: a payable one asks for payment (402); any answer below 500 is one. */
async function answers(item: RegistryItem, allowPrivate: boolean): Promise<boolean> {
  try {
    const response = await outboundFetch(allowPrivate)(item.resource, { method: item.method === 'GET' ? 'GET' : 'HEAD', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: 'manual' });
    response.body?.cancel().catch(() => undefined);
    return response.status < 500;
  } catch {
    return false;
  }
}

/** Runs `work` on each of `items`, at most `width` at once. */
async function eachAtMost<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: Math.min(width, queue.length) }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await work(item);
  }));
}

/**
 * Refreshes the registry from its configured sources (a source that cannot be read keeps its last items) and checks
 * that each of their endpoints answers: one that does not becomes `unreachable` (dropped from ranking) until it
 * answers again. The snapshots shipped in the repo are not checked (they are what works offline), and no source
 * rewrites another's endpoints. Only public http(s) addresses are read or checked: a source cannot make this server
 * probe its own network.
 */
export class RegistryRefresher extends PeriodicPass {
  constructor(
    private readonly registry: Registry,
    private readonly sources: RegistrySource[],
    private readonly now: () => number,
    /** WALLET_REGISTRY_ALLOW_PRIVATE: endpoints on loopback and private networks are checked too (tests). */
    private readonly allowPrivate = false,
  ) {
    super('refreshing the registry');
  }

  protected async pass(): Promise<number> {
    let refreshed = 0;
    for (const source of this.sources) {
      let items: RegistryItem[];
      try {
        const document = (await fetchSource(source.url, this.allowPrivate)) as Record<string, unknown>;
        const named = { ...document, source: source.url, fetchedAt: new Date(this.now()).toISOString() };
        items = source.kind === 'x402-bazaar' ? fromBazaar(named) : fromMppDirectory(named);
      } catch (error) {
        console.error(`the registry source ${source.url} could not be read; its last items stay:`, String(error));
        continue;
      }
      this.registry.replaceSource(source.url, items);
      const at = new Date(this.now()).toISOString();
      const own = this.registry.all().filter((item) => item.source === source.url);
      await eachAtMost(own, CHECKS_AT_ONCE, async (item) => this.registry.mark(item.id, (await answers(item, this.allowPrivate)) ? 'active' : 'unreachable', at));
      refreshed += own.length;
    }
    return refreshed;
  }
}
