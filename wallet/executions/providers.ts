import { outboundFetch } from '../public-network.js';
import { answerOf, send, type ProviderHttp } from './http-call.js';
import { callPaidProvider } from './paid-call.js';
import type { CallLimits, ProviderCaller, ProviderOutcome, ProviderTarget, ProviderTerms } from './provider-call.js';
import type { ProviderPayer } from './provider-payer.js';
import { signX402 } from './x402-asked.js';

/** The in-process capability of the test hooks: it answers with what it was given. */
export const TEST_ECHO = 'test:echo';

export interface ProvidersOptions {
  testHooks: boolean;
  /** The service's payer key for x402 and mpp providers; without it they are not executable. */
  payer: ProviderPayer | undefined;
  timeoutMs: number;
  /** WALLET_REGISTRY_ALLOW_PRIVATE: providers on loopback and private networks are called too (tests). */
  allowPrivate: boolean;
}

const NO_PAYER = "paying x402 and mpp providers needs the service's payer key: WALLET_PROVIDER_KEY_FILE, with the chain of PACT_X402_RPC_URL";

/**
 * The provider adapters: plain HTTP (priced by the catalog, no payment on the wire), x402 and mpp (paid from the
 * service's payer key, at most the hold), and the test hooks' echo. Providers are called on public addresses only.
 */
export class Providers implements ProviderCaller {
  /** Test hooks: the next call (to one endpoint, or to any) fails, as a provider's failure would. */
  private readonly failing = new Set<string>();
  private readonly http: ProviderHttp;

  constructor(private readonly options: ProvidersOptions) {
    this.http = { fetch: outboundFetch(options.allowPrivate), timeoutMs: options.timeoutMs };
  }

  failNext(resource: string | undefined): void {
    this.failing.add(resource ?? '*');
  }

  blocking(terms: ProviderTerms): string[] {
    switch (terms.rail) {
      case 'mock':
        return this.options.testHooks ? [] : ['the mock rail answers only under test hooks'];
      case 'http':
        return [];
      case 'x402':
      case 'mpp':
        return this.options.payer ? this.options.payer.refusalsFor(terms.network, terms.asset) : [NO_PAYER];
    }
  }

  async call(target: ProviderTarget, input: unknown, limits: CallLimits): Promise<ProviderOutcome> {
    const { testHooks, payer } = this.options;
    if (this.failing.delete(target.resource) || this.failing.delete('*')) return { ok: false, paid: false, reason: 'the provider failed (a test hook asked for it)' };
    switch (target.rail) {
      case 'mock':
        if (target.resource !== TEST_ECHO || !testHooks) return { ok: false, paid: false, reason: 'the mock rail answers only test.echo, under test hooks' };
        return { ok: true, output: { text: (input as { text: string }).text }, charged: limits.limit, payment: null };
      case 'http': {
        const sent = await send(this.http, target, input);
        const answer = sent.ok ? await answerOf(sent.response) : sent;
        return answer.ok ? { ok: true, output: answer.output, charged: limits.limit, payment: null } : { ok: false, paid: false, reason: answer.reason };
      }
      case 'x402':
        return payer ? callPaidProvider(this.http, target, input, limits, payer, signX402) : { ok: false, paid: false, reason: NO_PAYER };
      case 'mpp':
        return payer ? callPaidProvider(this.http, target, input, limits, payer, (response, signer, limit) => signer.signMpp(response, limit)) : { ok: false, paid: false, reason: NO_PAYER };
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
