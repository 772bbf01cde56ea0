import { signedAuthorizationOf, type SignedAuthorization } from '../evm/eip3009.js';

/** An x402 `exact` payment as the paid fund call's `X-PAYMENT` carries it, v1 or v2, reduced to what is checked. */
export interface X402Payment {
  version: 1 | 2;
  /** v1: a network name (`base-sepolia`); v2: the CAIP-2 network the payer accepted (`eip155:84532`). */
  network: string;
  signed: SignedAuthorization;
}

/**
 * Reads a v1 payload `{ x402Version: 1, scheme: "exact", network, payload: { signature, authorization } }` or a
 * v2 one `{ x402Version: 2, accepted: { scheme: "exact", network, … }, payload }`; undefined for anything else.
 */
export function x402PaymentOf(proof: unknown): X402Payment | undefined {
  if (typeof proof !== 'object' || proof === null) return undefined;
  const { x402Version, scheme, network, accepted, payload } = proof as Record<string, unknown>;
  const signed = signedAuthorizationOf(payload);
  if (!signed) return undefined;
  if (x402Version === 1 && scheme === 'exact' && typeof network === 'string') return { version: 1, network, signed };
  if (x402Version !== 2 || typeof accepted !== 'object' || accepted === null) return undefined;
  const terms = accepted as Record<string, unknown>;
  if (terms.scheme !== 'exact' || typeof terms.network !== 'string') return undefined;
  return { version: 2, network: terms.network, signed };
}
