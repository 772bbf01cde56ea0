import type { IncomingHttpHeaders } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { parsePaymentHeader } from '../../actors/admission.js';
import { escapeHtml } from '../../gateway/html.js';
import { paymentOf } from '../../gateway/payment-header.js';
import type { Checkout } from '../../machines/wallet/types.js';
import { RailError, type Rail, type Requirement } from '../../rails/rail.js';
import { crashPoint } from '../../runtime/crash-points.js';
import { checkoutCollectKey, creditCheckout } from '../checkout-credits.js';
import { statusOfWalletError, walletError, type WalletError } from '../errors.js';
import { sendWalletError } from '../reply.js';
import { checkoutOf, checkoutView, dollars, page, statusOf, type CheckoutRouteDeps } from './checkout.js';

/** How the pay route answers: pages to a browser posting the page's form, JSON (the wallet's error codes) to a program. */
interface Answers {
  refuse(error: WalletError, words: string): FastifyReply;
  pay(rail: string, requirement: Requirement, error: WalletError): FastifyReply;
  paid(checkout: Checkout, walletId: string, before: boolean): FastifyReply;
}

function answersFor(request: FastifyRequest, reply: FastifyReply, deps: CheckoutRouteDeps): Answers {
  const form = (request.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
  const base = deps.baseOf(request.headers.host);
  if (!form) {
    return {
      refuse: (error) => sendWalletError(reply, error),
      pay: (_rail, requirement, error) => sendWalletError(reply, { ...error, requirement }),
      paid: (checkout, walletId) => reply.send({ checkout: checkoutView(checkout, walletId, base, deps.clock.now()) }),
    };
  }
  return {
    refuse: (error, words) => page(reply.code(statusOfWalletError(error)), error.message, `<p>${words}</p>`),
    pay: (rail, requirement, error) =>
      page(reply.code(402), `Pay with ${rail}`, `<p>${escapeHtml(error.message)}</p><pre>${escapeHtml(JSON.stringify(requirement, null, 2))}</pre>`),
    paid: (checkout, _walletId, before) => {
      if (!before && checkout.successUrl) return reply.redirect(checkout.successUrl, 303);
      const words = before ? 'This checkout is paid already: nothing more was charged.' : `Paid: ${dollars(checkout.amount)} added to the wallet.`;
      return page(reply, 'Checkout paid', `<p>${words}</p>`);
    },
  };
}

const payBody = {
  type: 'object',
  required: ['rail'],
  properties: {
    rail: { type: 'string', maxLength: 32, description: 'one of WALLET_CHECKOUT_RAILS' },
    railAddress: { type: 'string', maxLength: 128, description: "mpp: the payer's address on the chain" },
  },
} as const;

/**
 * `POST /checkout/{id}/pay` with `rail`: the mock pays at once (the page's form, development); x402 answers 402 with
 * its requirement, then takes the proof in `X-PAYMENT`; mpp (with the payer's `railAddress`) answers 402 with its
 * challenge, then takes `Authorization: Payment`. The collect is keyed by the checkout, so
 * paying again never takes the money twice, and the wallet is credited once. A payment taken before the checkout
 * expired is credited even when it is recorded after (a retry, or the keeper, finds it on the rail).
 */
export function registerPay(app: FastifyInstance, deps: CheckoutRouteDeps): void {
  const { desk, clock } = deps;
  app.post<{ Params: { id: string }; Body: { rail?: unknown; railAddress?: unknown } | undefined }>('/checkout/:id/pay', { schema: { operationId: 'payCheckout', body: payBody } }, async (request, reply) => {
    const answer = answersFor(request, reply, deps);
    const found = await checkoutOf(deps, request.params.id);
    if (!found) return answer.refuse(walletError('not_found', 'no such checkout'), 'This checkout does not exist.');
    const asked = request.body?.rail;
    const rail = typeof asked === 'string' ? deps.checkoutRails.get(asked) : undefined;
    const names = [...deps.checkoutRails.keys()];
    if (!rail) return answer.refuse(walletError('invalid_request', `pay with one of: ${names.join(', ')}`, { field: 'rail' }), `Pay with one of: ${names.map(escapeHtml).join(', ')}.`);
    const { checkout, wallet } = found;
    if (checkout.status === 'completed') return answer.paid(checkout, wallet.id, true);
    const key = checkoutCollectKey(checkout.id);
    const credit = async (ref: string, paidAt: number) => {
      const outcome = await creditCheckout(desk, wallet.id, checkout.id, { rail: rail.name, ref, paidAt });
      if ('error' in outcome) return answer.refuse(walletError('unavailable', `the payment was taken but not yet credited (${outcome.error.message}): send the same again`), `The payment was taken but could not be credited yet; it is kept under this checkout. Send the same again.`);
      return answer.paid('credited' in outcome ? outcome.credited.checkouts[checkout.id]! : checkout, wallet.id, 'paidAlready' in outcome);
    };
    if (statusOf(checkout, clock.now()) === 'expired') {
      // No collect begins after expiry, so money found on the rail was taken in time: credited, never lost.
      let taken;
      try {
        taken = await rail.collected(key);
      } catch (error) {
        if (!(error instanceof RailError)) throw error;
        return answer.refuse(walletError('unavailable', `the ${rail.name} rail cannot say yet whether this checkout was paid: send the same again`), 'Whether this checkout was paid cannot be told yet: send the same again in a moment.');
      }
      if (taken) return credit(taken.ref, checkout.expiresAt - 1);
      return answer.refuse(walletError('checkout_expired', 'this checkout expired: nothing was paid; open a new one'), 'This checkout expired: nothing was paid. Ask for a new one.');
    }
    const railAddress = request.body?.railAddress;
    if (rail.needsRailAddress && (typeof railAddress !== 'string' || !rail.isAddress(railAddress))) {
      return answer.refuse(walletError('invalid_request', `${rail.name} needs the payer's address on the rail in railAddress`, { field: 'railAddress' }), `Paying with ${escapeHtml(rail.name)} needs your address in railAddress.`);
    }
    const paidAt = clock.now();
    const charge = {
      key,
      pactId: '',
      payer: `checkout-payer:${wallet.id}` as never,
      amount: { amount: checkout.amount, asset: rail.asset ?? 'USD' },
      ...(rail.needsRailAddress ? { railAddress: railAddress as string } : {}),
    };
    const proof = rail.name === 'mock' ? { scheme: 'mock' } : proofOf(request.headers);
    if (proof === undefined) {
      const { requirement, headers } = await rail.quote(charge);
      reply.headers(headers ?? {});
      const how = rail.needsRailAddress ? 'Authorization: Payment <credential>' : 'X-PAYMENT';
      return answer.pay(rail.name, requirement, walletError('payment_required', `pay the requirement, then post the same again with ${how}`));
    }
    try {
      const receipt = await rail.collect({ ...charge, proof });
      crashPoint('checkout-collected'); // the money taken, the wallet never told
      reply.headers(receipt.headers ?? {});
      return await credit(receipt.ref, paidAt);
    } catch (error) {
      if (!(error instanceof RailError)) throw error;
      if (error.code === 'rail_failure') return answer.refuse(walletError('unavailable', `${error.message}: send the same proof again`), 'The payment could not be completed now: send the same again.');
      const { requirement } = await rail.quote(charge);
      return answer.pay(rail.name, requirement, walletError('payment_failed', error.message, { reason: error.code }));
    }
  });
}

/** The payment proof a program sent (X-PAYMENT or x402 v2's PAYMENT-SIGNATURE, as JSON or base64 JSON; mpp's `Authorization: Payment`); undefined when none. */
function proofOf(headers: IncomingHttpHeaders): unknown {
  const payment = paymentOf(headers);
  return payment === undefined ? undefined : (parsePaymentHeader(payment) ?? null);
}

/** How a program pays on the rails other than the mock: the 402 flow of the escrow's fund call. */
export function programs(checkout: Checkout, rails: ReadonlyMap<string, Rail>): string {
  const real = [...rails.keys()].filter((name) => name !== 'mock');
  if (real.length === 0) return '';
  const path = `/checkout/${escapeHtml(checkout.id)}/pay`;
  return `<p>Programs pay with ${real.map(escapeHtml).join(', ')}: <code>POST ${path}</code> with JSON <code>{"rail":"&lt;name&gt;"}</code> (mpp: and <code>"railAddress"</code>) answers 402 with the requirement; the same again with <code>X-PAYMENT</code> (mpp: <code>Authorization: Payment</code>) pays it.</p>`;
}
