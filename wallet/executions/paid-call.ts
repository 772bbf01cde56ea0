import type { ProviderAuthorization } from '../../machines/wallet/types.js';
import { crashPoint } from '../../runtime/crash-points.js';
import { answerOf, send } from './http-call.js';
import type { CallLimits, ProviderOutcome, ProviderPayment, ProviderTarget } from './provider-call.js';
import { PaymentRefused, type ProviderPayer, type SignedPayment } from './provider-payer.js';

/** What a provider asked on its first, unpaid call: an answer (given free), or a payment to sign. */
export async function unpaidOutcome(response: Response): Promise<ProviderOutcome> {
  const answer = await answerOf(response);
  return answer.ok ? { ok: true, output: answer.output, charged: 0n, payment: null } : { ok: false, paid: false, reason: answer.reason };
}

/** Signs a payment, or says why it was not (nothing signed, so nothing paid). */
export async function signed(sign: () => Promise<SignedPayment>): Promise<SignedPayment | { ok: false; paid: false; reason: string }> {
  try {
    return await sign();
  } catch (error) {
    const why = error instanceof PaymentRefused ? error.message : `the payment could not be signed: ${String(error)}`;
    return { ok: false, paid: false, reason: why };
  }
}

/**
 * The paid leg of a call: the authorization recorded first (so a crash after it leaves the call ambiguous, never
 * forgotten), then sent. An answer charges what was signed; no answer at all is ambiguous; an unusable answer is
 * settled by what the chain says of the authorization.
 */
export async function sendPaid(
  target: ProviderTarget,
  input: unknown,
  payment: SignedPayment,
  context: { limits: CallLimits; payer: ProviderPayer; timeoutMs: number; referenceOf: (response: Response) => string | undefined },
): Promise<ProviderOutcome> {
  const { authorization } = payment;
  try {
    await context.limits.paying(authorization);
  } catch (error) {
    return { ok: false, paid: false, reason: `the payment could not be recorded, so it was not sent: ${String(error)}` };
  }
  crashPoint('execution-paying'); // signed and recorded, never sent
  const sent = await send(target, input, context.timeoutMs, payment.header);
  if (!sent.ok) return { ok: false, paid: 'maybe', reason: sent.reason };
  const reference = context.referenceOf(sent.response);
  const answer = await answerOf(sent.response);
  if (answer.ok) return { ok: true, output: answer.output, charged: BigInt(authorization.charged), payment: paymentOf(authorization, reference) };
  return afterUnusableAnswer(context.payer, authorization, answer.reason);
}

/**
 * A paid request answered with no usable answer: taken on the chain, the provider was paid (charged, no result);
 * not taken, it was refused (its authorization lapses within minutes; the provider had answered that it failed).
 */
async function afterUnusableAnswer(payer: ProviderPayer, authorization: ProviderAuthorization, reason: string): Promise<ProviderOutcome> {
  try {
    const settlement = await payer.settlementOf(authorization);
    if (settlement.used) return { ok: false, paid: true, charged: BigInt(authorization.charged), payment: paymentOf(authorization, settlement.reference), reason: `${reason}, after taking its payment` };
    return { ok: false, paid: false, reason: `${reason}; the payment was not taken` };
  } catch (error) {
    return { ok: false, paid: 'maybe', reason: `${reason}; whether the payment was taken could not be read: ${String(error)}` };
  }
}

export function paymentOf(authorization: ProviderAuthorization, reference: string | undefined): ProviderPayment {
  return { network: authorization.network, payTo: authorization.to, ...(reference ? { reference } : {}) };
}
