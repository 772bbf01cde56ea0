import type { FastifyInstance, FastifyReply } from 'fastify';
import type { WalletEvent } from '../../machines/wallet/events.js';
import type { Checkout, Wallet } from '../../machines/wallet/types.js';
import type { Rail } from '../../rails/rail.js';
import type { Clock } from '../../runtime/clock.js';
import { escapeHtml } from '../../gateway/html.js';
import { walletOfBearer } from '../auth.js';
import { statusOfWalletError, walletError, type WalletError } from '../errors.js';
import type { IdempotencyStore } from '../idempotency.js';
import { idempotently } from '../idempotent-route.js';
import { sendWalletError } from '../reply.js';
import { newId } from '../secrets.js';
import { ownedKey, ownerOf, type TokenIndex } from '../token-index.js';
import { isoTime, usd } from '../views.js';
import type { WalletDesk } from '../wallet-desk.js';
import { programs, registerPay } from './checkout-pay.js';
import { BEARER, IDEMPOTENCY_HEADER } from './wallets.js';

export interface CheckoutRouteDeps {
  desk: WalletDesk;
  tokens: TokenIndex;
  idempotency: IdempotencyStore;
  clock: Clock;
  baseOf: (host: string | undefined) => string;
  /** The rails a checkout page can pay with (the escrow's rail code): `mock` in development. */
  checkoutRails: ReadonlyMap<string, Rail>;
}

export const CHECKOUT_TTL_MS = 30 * 60_000;
const OPEN_CHECKOUTS_AT_MOST = 10;
const MIN_MICRO_USD = 1_000_000n;
const MAX_MICRO_USD = 500_000_000n;

const url = { type: 'string', minLength: 1, maxLength: 2048, pattern: '^https?://[\\x21-\\x7e]+$' } as const;
const checkoutBody = {
  type: 'object',
  required: ['amount'],
  additionalProperties: false,
  properties: {
    amount: {
      type: 'object',
      required: ['amount', 'asset'],
      additionalProperties: false,
      properties: { amount: { type: 'string', pattern: '^(0|[1-9][0-9]{0,29})$' }, asset: { const: 'USD' } },
    },
    successUrl: url,
    cancelUrl: url,
  },
} as const;

type CheckoutBody = { amount: { amount: string; asset: 'USD' }; successUrl?: string; cancelUrl?: string };

export const statusOf = (checkout: Checkout, now: number) => (checkout.status === 'open' && now >= checkout.expiresAt ? 'expired' : checkout.status);
export const dollars = (micro: string) => `$${(Number(BigInt(micro) / 10_000n) / 100).toFixed(2)}`;

export function checkoutView(checkout: Checkout, walletId: string, base: string, now: number) {
  return {
    id: checkout.id,
    walletId,
    url: `${base}/checkout/${checkout.id}`,
    amount: usd(checkout.amount),
    status: statusOf(checkout, now),
    createdAt: isoTime(checkout.createdAt),
    expiresAt: isoTime(checkout.expiresAt),
    completedAt: checkout.completedAt === null ? null : isoTime(checkout.completedAt),
  };
}

/**
 * `POST /v1/checkout` (bearer) opens a hosted checkout of 1 to 500 USD, open 30 minutes; `GET /checkout/{id}` is
 * its page, whose form posts to `POST /checkout/{id}/pay` with a `rail`. Paying credits the wallet exactly once
 * (a `topup`); paying again says it is paid already; an expired checkout never credits.
 */
export function registerCheckoutRoutes(app: FastifyInstance, deps: CheckoutRouteDeps): void {
  const { desk, tokens, idempotency, clock } = deps;
  app.post<{ Body: CheckoutBody }>('/v1/checkout', { schema: { operationId: 'createCheckout', security: BEARER, body: checkoutBody, headers: IDEMPOTENCY_HEADER } }, async (request, reply) => {
    const opened = await walletOfBearer(request, tokens, desk);
    if ('error' in opened) return sendWalletError(reply, opened.error);
    const walletId = opened.wallet.id;
    const amount = BigInt(request.body.amount.amount);
    if (amount < MIN_MICRO_USD || amount > MAX_MICRO_USD) {
      return sendWalletError(reply, walletError('invalid_request', 'a checkout is between 1 and 500 USD (1000000 to 500000000 micro-USD)', { field: 'amount' }));
    }
    const [successUrl, cancelUrl] = [webUrl(request.body.successUrl), webUrl(request.body.cancelUrl)];
    if (successUrl === undefined || cancelUrl === undefined) return sendWalletError(reply, walletError('invalid_request', 'successUrl and cancelUrl are http(s) URLs', { field: 'successUrl' }));
    return idempotently(idempotency, `wallet:${walletId}`, request, reply, async () => {
      const id = newId('co');
      await tokens.add({ tokenHash: ownedKey('checkout', id), walletId, kind: 'checkout' });
      const outcome = await desk.change(walletId, (wallet, now): WalletEvent | WalletError => {
        if (wallet.status === 'suspended') return walletError('wallet_suspended', 'this wallet is suspended');
        const open = Object.values(wallet.checkouts).filter((checkout) => statusOf(checkout, now) === 'open').length;
        if (open >= OPEN_CHECKOUTS_AT_MOST) return walletError('invalid_request', `a wallet has at most ${OPEN_CHECKOUTS_AT_MOST} open checkouts; pay one or let it expire`);
        const checkout: Checkout = { id, amount: amount.toString(), status: 'open', createdAt: now, expiresAt: now + CHECKOUT_TTL_MS, completedAt: null, successUrl, cancelUrl, paidWith: null };
        return { type: 'checkoutOpened', at: now, checkout };
      });
      if ('error' in outcome) return { status: statusOfWalletError(outcome.error), body: outcome.error };
      const checkout = outcome.wallet.checkouts[id]!;
      return { status: 201, body: { checkout: checkoutView(checkout, walletId, deps.baseOf(request.headers.host), clock.now()) } };
    });
  });

  app.get<{ Params: { id: string } }>('/checkout/:id', { schema: { operationId: 'checkoutPage' } }, async (request, reply) => {
    const found = await checkoutOf(deps, request.params.id);
    if (!found) return page(reply.code(404), 'No such checkout', '<p>This checkout does not exist.</p>');
    const { checkout } = found;
    const status = statusOf(checkout, clock.now());
    if (status !== 'open') return page(reply, `Checkout ${status}`, `<p>This checkout of ${dollars(checkout.amount)} is ${status}.</p>`);
    const options = [...deps.checkoutRails.keys()].map((rail) => `<option value="${escapeHtml(rail)}">${escapeHtml(rail)}</option>`).join('');
    const cancel = checkout.cancelUrl ? ` <a href="${escapeHtml(checkout.cancelUrl)}">Cancel</a>` : '';
    return page(
      reply,
      `Add ${dollars(checkout.amount)} of credit`,
      `<p>Add <strong>${dollars(checkout.amount)}</strong> (${checkout.amount} micro-USD) to wallet ${escapeHtml(found.wallet.id)}. Open until ${isoTime(checkout.expiresAt)}.</p>
<form method="post" action="/checkout/${escapeHtml(checkout.id)}/pay"><label>Pay with <select name="rail">${options}</select></label> <button type="submit">Pay</button>${cancel}</form>${programs(checkout, deps.checkoutRails)}`,
    );
  });

  // The page's form posts `rail=…` as a browser does; only this route takes a form (no other can be posted cross-site as one).
  void app.register(async (scoped) => {
    scoped.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => done(null, Object.fromEntries(new URLSearchParams(body as string))));
    registerPay(scoped, deps);
  });
}

/** An http(s) URL as the WHATWG parser writes it (printable ASCII only); null when none was given, undefined when it is no such URL. */
function webUrl(text: string | undefined): string | null | undefined {
  if (text === undefined) return null;
  if (!URL.canParse(text)) return undefined;
  const parsed = new URL(text);
  return parsed.protocol === 'http:' || parsed.protocol === 'https:' ? parsed.href : undefined;
}

export async function checkoutOf(deps: CheckoutRouteDeps, id: string): Promise<{ wallet: Wallet; checkout: Checkout } | undefined> {
  const wallet = await ownerOf(deps.tokens, deps.desk, 'checkout', id);
  const checkout = wallet?.checkouts[id];
  return wallet && checkout ? { wallet, checkout } : undefined;
}

export function page(reply: FastifyReply, title: string, body: string): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'")
    .send(`<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body><h1>${escapeHtml(title)}</h1>${body}</body></html>`);
}
