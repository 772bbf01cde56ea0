import type { ProviderAuthorization } from '../../machines/wallet/types.js';
import { crashPoint } from '../../runtime/crash-points.js';
import { answerOf, discard, send, type ProviderHttp } from './http-call.js';
import type { CallLimits, ProviderOutcome, ProviderPayment, ProviderTarget } from './provider-call.js';
import { PaymentRefused } from './payment-refused.js';
import type { ProviderPayer, Settlement, SignedPayment } from './provider-payer.js';

/** How a rail answers a provider's 402: a payment of at most `limit` micro-USD, signed, or PaymentRefused. */
export type SignFor402 = (response: Response, payer: ProviderPayer, limit: bigint) => Promise<SignedPayment>;

/**
 * Calls a paid provider (x402, mpp): unpaid first (an answer then is free); a 402 is answered by `sign` from the
 * service's payer key, the authorization recorded (`limits.paying`) before it leaves, then sent with the call again.
 * What became of it is read from the chain, not from the provider: an answer is charged what was signed (the
 * settlement transaction as the chain shows it); an unusable answer or none at all is charged only once the chain
 * shows the payment taken, and otherwise held (ambiguous) until the authorization lapses.
 */
export async function callPaidProvider(http: ProviderHttp, target: ProviderTarget, input: unknown, limits: CallLimits, payer: ProviderPayer, sign: SignFor402): Promise<ProviderOutcome> {
  const first = await send(http, target, input);
  if (!first.ok) return { ok: false, paid: false, reason: first.reason };
  if (first.response.status !== 402) {
    const answer = await answerOf(first.response);
    return answer.ok ? { ok: true, output: answer.output, charged: 0n, payment: null } : { ok: false, paid: false, reason: answer.reason };
  }
  let payment: SignedPayment;
  try {
    payment = await sign(first.response, payer, limits.limit);
    await limits.paying(payment.authorization);
  } catch (error) {
    return { ok: false, paid: false, reason: error instanceof PaymentRefused ? error.message : `the payment was not made: ${String(error)}` };
  } finally {
    discard(first.response);
  }
  crashPoint('execution-paying'); // signed and recorded, never sent
  const sent = await send(http, target, input, payment.header);
  const answer = sent.ok ? await answerOf(sent.response) : sent;
  return outcomeOnChain(payer, payment.authorization, answer);
}

/** What the chain says became of a sent payment, with what the provider answered. */
async function outcomeOnChain(payer: ProviderPayer, authorization: ProviderAuthorization, answer: { ok: true; output: unknown } | { ok: false; reason: string }): Promise<ProviderOutcome> {
  const charged = BigInt(authorization.charged);
  let settlement: Settlement;
  try {
    settlement = await payer.settlementOf(authorization);
  } catch (error) {
    if (answer.ok) return { ok: true, output: answer.output, charged, payment: paymentOf(authorization, undefined) };
    return { ok: false, paid: 'maybe', reason: `${answer.reason}; whether the payment was taken could not be read: ${String(error)}` };
  }
  const reference = settlement.state === 'taken' ? settlement.reference : undefined;
  if (answer.ok) return { ok: true, output: answer.output, charged, payment: paymentOf(authorization, reference) };
  if (reference) return { ok: false, paid: true, charged, payment: paymentOf(authorization, reference), reason: `${answer.reason}, after taking its payment` };
  return { ok: false, paid: 'maybe', reason: `${answer.reason}; the payment is not taken, and held until it lapses` };
}

export function paymentOf(authorization: ProviderAuthorization, reference: string | undefined): ProviderPayment {
  return { network: authorization.network, payTo: authorization.to, ...(reference ? { reference } : {}) };
}
