import { Receipt } from 'mppx';
import { discard, send } from './http-call.js';
import { sendPaid, signed, unpaidOutcome } from './paid-call.js';
import type { CallLimits, ProviderOutcome, ProviderTarget } from './provider-call.js';
import type { ProviderPayer } from './provider-payer.js';

/** The settlement transaction an mpp provider reports in its Payment-Receipt, if any. */
function referenceOf(response: Response): string | undefined {
  try {
    return Receipt.fromResponse(response).reference || undefined;
  } catch {
    return undefined;
  }
}

/** Calls an mpp provider: unpaid first; a 402 `Payment` challenge is answered from the service's payer key (at most the hold) and sent again. */
export async function callMpp(target: ProviderTarget, input: unknown, limits: CallLimits, payer: ProviderPayer, timeoutMs: number): Promise<ProviderOutcome> {
  const first = await send(target, input, timeoutMs);
  if (!first.ok) return { ok: false, paid: false, reason: first.reason };
  if (first.response.status !== 402) return unpaidOutcome(first.response);
  const payment = await signed(() => payer.signMpp(first.response, limits.limit));
  discard(first.response);
  if ('reason' in payment) return payment;
  return sendPaid(target, input, payment, { limits, payer, timeoutMs, referenceOf });
}
