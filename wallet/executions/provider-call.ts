import type { Execution, ExecutionRail, ProviderAuthorization } from '../../machines/wallet/types.js';

/** Where a call goes. */
export interface ProviderTarget {
  rail: ExecutionRail;
  resource: string;
  method: string;
}

/** What a provider's payment must be on: its network and token (null where nothing is paid on the wire). */
export interface ProviderTerms {
  rail: ExecutionRail;
  network: string | null;
  asset: string | null;
}

export type ProviderPayment = NonNullable<Execution['providerPayment']>;

/**
 * What became of a call: an answer (charged what the provider was paid, or the catalog's price); no payment made
 * (`paid: false`: the hold comes back); a payment the provider took with no usable answer (`paid: true`); or no
 * answer after a payment may have gone (`paid: 'maybe'`: held for reconciliation, never retried blindly).
 */
export type ProviderOutcome =
  | { ok: true; output: unknown; charged: bigint; payment: ProviderPayment | null }
  | { ok: false; paid: false | 'maybe'; reason: string }
  | { ok: false; paid: true; charged: bigint; payment: ProviderPayment; reason: string };

export interface CallLimits {
  /** micro-USD: the hold; a provider asking more is not paid. */
  limit: bigint;
  /** Records the authorization signed for the provider before it leaves; if this throws, nothing is sent. */
  paying(authorization: ProviderAuthorization): Promise<void>;
}

export interface ProviderCaller {
  /** What keeps calls to providers on these terms from being made from here (none: they can be). */
  blocking(terms: ProviderTerms): string[];
  call(target: ProviderTarget, input: unknown, limits: CallLimits): Promise<ProviderOutcome>;
}

/** The longest a provider call may take (WALLET_PROVIDER_TIMEOUT_MS may shorten it). */
export const CALL_TIMEOUT_MS = 30_000;

/** The most a chain read may take (viem's timeout of the rails' reader). */
const CHAIN_READ_MS = 10_000;
/**
 * An execution with no outcome this long after it began was cut off by a crash: no call lasts it (an unpaid and a
 * paid request, and the chain reads around them: block, nonce, settlement, at most six), and a margin.
 */
export const STALE_EXECUTION_MS = 2 * CALL_TIMEOUT_MS + 6 * CHAIN_READ_MS + 60_000;
