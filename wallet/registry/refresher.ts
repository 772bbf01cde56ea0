import { PeriodicPass } from '../../actors/periodic-pass.js';
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

/** A source's document, read with a time and size limit. */
async function fetchSource(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(FETCH_TIMEOUT_MS), headers: { accept: 'application/json' } });
  if (!response.ok) throw new Error(`${url} answered ${response.status}`);
  const text = await response.text();
  if (text.length > MAX_SOURCE_BYTES) throw new Error(`${url} sent more than ${MAX_SOURCE_BYTES} bytes`);
  return JSON.parse(text);
}

/** Whether an endpoint answers: a payable one asks for payment (402); any answer below 500 is one. */
async function answers(item: RegistryItem): Promise<boolean> {
  try {
    const response = await fetch(item.resource, { method: item.method === 'GET' ? 'GET' : 'HEAD', signal: AbortSignal.timeout(PROBE_TIMEOUT_MS), redirect: 'manual' });
    await response.body?.cancel();
    return response.status < 500;
  } catch {
    return false;
  }
}

/**
 * Refreshes the registry from its configured sources (a source that cannot be read keeps its last items) and checks
 * that each of their endpoints answers: one that does not becomes `unreachable` (dropped from ranking) until it
 * answers again. The snapshots shipped in the repo are not checked: they are what works offline.
 */
export class RegistryRefresher extends PeriodicPass {
  constructor(
    private readonly registry: Registry,
    private readonly sources: RegistrySource[],
    private readonly now: () => number,
  ) {
    super('refreshing the registry');
  }

  protected async pass(): Promise<number> {
    let refreshed = 0;
    for (const source of this.sources) {
      let items: RegistryItem[];
      try {
        const document = (await fetchSource(source.url)) as Record<string, unknown>;
        const named = { ...document, source: source.url, fetchedAt: new Date(this.now()).toISOString() };
        items = source.kind === 'x402-bazaar' ? fromBazaar(named) : fromMppDirectory(named);
      } catch (error) {
        console.error(`the registry source ${source.url} could not be read; its last items stay:`, String(error));
        continue;
      }
      this.registry.replaceSource(source.url, items);
      const at = new Date(this.now()).toISOString();
      await Promise.all(items.map(async (item) => this.registry.mark(item.id, (await answers(item)) ? 'active' : 'unreachable', at)));
      refreshed += items.length;
    }
    return refreshed;
  }
}
