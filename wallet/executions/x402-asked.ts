import { decodePaymentRequiredHeader } from '@x402/core/http';
import { bodyOf } from './http-call.js';
import type { SignFor402 } from './paid-call.js';
import { PaymentRefused } from './payment-refused.js';
import type { X402Entry } from './provider-payer.js';

const MAX_402_BODY_BYTES = 64_000;

type Asked = { version: 1 | 2; accepts: X402Entry[]; resource: unknown };

/** What an x402 402 asks: v2 in its PAYMENT-REQUIRED header, else (v1, or v2 by some servers) in its JSON body. */
async function askedOf(response: Response): Promise<Asked> {
  const header = response.headers.get('payment-required');
  if (header) {
    try {
      const required = decodePaymentRequiredHeader(header) as unknown as { accepts?: unknown; resource?: unknown };
      return { version: 2, accepts: Array.isArray(required.accepts) ? (required.accepts as X402Entry[]) : [], resource: required.resource };
    } catch (error) {
      throw new PaymentRefused(`the provider's PAYMENT-REQUIRED header is unreadable: ${String(error)}`);
    }
  }
  const body = await bodyOf(response, MAX_402_BODY_BYTES);
  try {
    const asked = JSON.parse(body.ok ? body.text : '') as { x402Version?: unknown; accepts?: unknown; resource?: unknown };
    if ((asked.x402Version === 1 || asked.x402Version === 2) && Array.isArray(asked.accepts)) return { version: asked.x402Version, accepts: asked.accepts as X402Entry[], resource: asked.resource };
  } catch {
    // not JSON: not an x402 payment request
  }
  throw new PaymentRefused("the provider's 402 is not an x402 payment request");
}

/** Answers an x402 provider's 402: its `exact` entry on this chain in this token, within the hold, signed in its version. */
export const signX402: SignFor402 = async (response, payer, limit) => {
  const asked = await askedOf(response);
  return payer.signX402(payer.x402Entry(asked.accepts, asked.version, limit), asked.version, asked.resource);
};
