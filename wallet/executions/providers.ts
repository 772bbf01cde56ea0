import type { Execution, ExecutionRail } from '../../machines/wallet/types.js';

/** Where a call goes. */
export interface ProviderTarget {
  rail: ExecutionRail;
  resource: string;
  method: string;
}

/**
 * What became of a call: an answer; a failure before any payment (`paid: false`: the hold comes back); or no answer
 * after a payment may have gone (`paid: 'maybe'`: held for reconciliation, never retried blindly).
 */
export type ProviderOutcome =
  | { ok: true; output: unknown; payment: Execution['providerPayment'] }
  | { ok: false; paid: false | 'maybe'; reason: string };

export interface ProviderCaller {
  /** What keeps calls on `rail` from being made from here (none: they can be). */
  blocking(rail: ExecutionRail): string[];
  call(target: ProviderTarget, input: unknown): Promise<ProviderOutcome>;
}

export const CALL_TIMEOUT_MS = 30_000;
const MAX_ANSWER_CHARS = 1_000_000;
/** The in-process capability of the test hooks: it answers with what it was given. */
export const TEST_ECHO = 'test:echo';

/** A GET carries its input as query parameters (each value as text); anything else as a JSON body. */
function requestFor(target: ProviderTarget, input: unknown): { url: string; init: RequestInit } {
  if (target.method === 'GET') {
    const url = new URL(target.resource);
    for (const [name, value] of Object.entries((input ?? {}) as Record<string, unknown>)) url.searchParams.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    return { url: url.href, init: { method: 'GET' } };
  }
  return { url: target.resource, init: { method: target.method, headers: { 'content-type': 'application/json' }, body: JSON.stringify(input) } };
}

/**
 * The provider adapters: plain HTTP (priced by the catalog, no payment on the wire), and the test hooks' echo. x402
 * and mpp providers, paid from the service's own payer key, are not built yet: `blocking` says so, and discovery
 * marks them not executable.
 */
export class Providers implements ProviderCaller {
  /** Test hooks: the next call (to one endpoint, or to any) fails, as a provider's failure would. */
  private readonly failing = new Set<string>();

  constructor(private readonly testHooks: boolean) {}

  failNext(resource: string | undefined): void {
    this.failing.add(resource ?? '*');
  }

  blocking(rail: ExecutionRail): string[] {
    if (rail === 'mock') return this.testHooks ? [] : ['the mock rail answers only under test hooks'];
    return rail === 'http' ? [] : [`paying ${rail} providers from the service's payer key is not built yet`];
  }

  async call(target: ProviderTarget, input: unknown): Promise<ProviderOutcome> {
    if (this.failing.delete(target.resource) || this.failing.delete('*')) return { ok: false, paid: false, reason: 'the provider failed (a test hook asked for it)' };
    if (target.resource === TEST_ECHO) return this.testHooks ? { ok: true, output: { text: (input as { text: string }).text }, payment: null } : { ok: false, paid: false, reason: 'test.echo answers only under test hooks' };
    const blocked = this.blocking(target.rail);
    if (blocked.length > 0) return { ok: false, paid: false, reason: blocked.join('; ') };
    const { url, init } = requestFor(target, input);
    let response: Response;
    try {
      response = await fetch(url, { ...init, signal: AbortSignal.timeout(CALL_TIMEOUT_MS) });
    } catch (error) {
      return { ok: false, paid: false, reason: `the provider could not be reached: ${String(error)}` };
    }
    if (!response.ok) {
      await response.body?.cancel();
      return { ok: false, paid: false, reason: `the provider answered ${response.status}` };
    }
    let text: string;
    try {
      text = await response.text();
    } catch (error) {
      return { ok: false, paid: false, reason: `the provider's answer was cut off: ${String(error)}` };
    }
    if (text.length > MAX_ANSWER_CHARS) return { ok: false, paid: false, reason: `the provider's answer is over ${MAX_ANSWER_CHARS} characters` };
    try {
      return { ok: true, output: JSON.parse(text), payment: null };
    } catch {
      return { ok: false, paid: false, reason: 'the provider answered with something that is not JSON' };
    }
  }
}

/** The capability the test hooks add to the catalog (WALLET-DECISIONS.md): `test.echo`, rail `mock`, answered in process. */
export const TEST_ECHO_CAPABILITY = {
  id: 'test.echo',
  name: 'Echo (test hooks)',
  description: 'Answers with the text it was given; only under PACT_TEST_HOOKS=1.',
  category: 'test',
  tags: ['test', 'echo'],
  inputSchema: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', maxLength: 10000 } } },
  outputSchema: { type: 'object', properties: { text: { type: 'string' } } },
  providers: [{ rail: 'mock', method: 'POST', resource: TEST_ECHO, price: '10000' }],
};
