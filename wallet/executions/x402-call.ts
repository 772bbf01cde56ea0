import { decodePaymentRequiredHeader, decodePaymentResponseHeader } from '@x402/core/http';
import { discard, send } from './http-call.js';
import { sendPaid, signed, unpaidOutcome } from './paid-call.js';
import type { CallLimits, ProviderOutcome, ProviderTarget } from './provider-call.js';
import type { ProviderPayer, X402Entry } from './provider-payer.js';

const MAX_402_BODY_CHARS = 64_000;

type Asked = { version: 1 | 2; accepts: X402Entry[]; resource: unknown };

/** What an x402 402 asks: v2 in its PAYMENT-REQUIRED header, v1 in its JSON body. */
async function askedOf(response: Response): Promise<Asked | { reason: string }> {
  const header = response.headers.get('payment-required');
  if (header) {
    discard(response);
    try {
      const required = decodePaymentRequiredHeader(header) as unknown as { accepts: X402Entry[]; resource?: unknown };
      return { version: 2, accepts: required.accepts ?? [], resource: required.resource };
    } catch (error) {
      return { reason: `the provider's PAYMENT-REQUIRED header is unreadable: ${String(error)}` };
    }
  }
  try {
    const text = await response.text();
    if (text.length > MAX_402_BODY_CHARS) return { reason: 'the provider\'s 402 body is too long' };
    const body = JSON.parse(text) as { x402Version?: unknown; accepts?: unknown };
    if (body.x402Version !== 1 || !Array.isArray(body.accepts)) return { reason: 'the provider\'s 402 is not an x402 payment request' };
    return { version: 1, accepts: body.accepts as X402Entry[], resource: undefined };
  } catch {
    return { reason: 'the provider\'s 402 is not an x402 payment request' };
  }
}

/** The settlement transaction an x402 provider reports (PAYMENT-RESPONSE, v1 X-PAYMENT-RESPONSE), if any. */
function referenceOf(response: Response): string | undefined {
  const header = response.headers.get('payment-response') ?? response.headers.get('x-payment-response');
  if (!header) return undefined;
  try {
    const settled = decodePaymentResponseHeader(header) as { transaction?: unknown };
    return typeof settled.transaction === 'string' && settled.transaction !== '' ? settled.transaction : undefined;
  } catch {
    return undefined;
  }
}

/** Calls an x402 provider: unpaid first; a 402 is paid from the service's payer key (at most the hold) and sent again. */
export async function callX402(target: ProviderTarget, input: unknown, limits: CallLimits, payer: ProviderPayer, timeoutMs: number): Promise<ProviderOutcome> {
  const first = await send(target, input, timeoutMs);
  if (!first.ok) return { ok: false, paid: false, reason: first.reason };
  if (first.response.status !== 402) return unpaidOutcome(first.response);
  const asked = await askedOf(first.response);
  if ('reason' in asked) return { ok: false, paid: false, reason: asked.reason };
  const payment = await signed(async () => payer.signX402(payer.x402Entry(asked.accepts, asked.version, limits.limit), asked.version, asked.resource));
  if ('reason' in payment) return payment;
  return sendPaid(target, input, payment, { limits, payer, timeoutMs, referenceOf });
}
