import type { WalletEvent } from '../machines/wallet/events.js';
import type { Wallet } from '../machines/wallet/types.js';
import { walletError, type WalletError } from './errors.js';
import { topupOf } from './ledger.js';
import type { WalletDesk } from './wallet-desk.js';

/** A checkout's collect key on its rail: paying again never collects twice. */
export const checkoutCollectKey = (checkoutId: string) => `checkout:${checkoutId}`;

const PAID_ALREADY: WalletError = walletError('invalid_request', 'this checkout is paid already');

export type CheckoutCredit = { credited: Wallet } | { paidAlready: true } | { error: WalletError };

/**
 * Credits a checkout's wallet for the money `rail` took (`ref`), once: a checkout already completed is left as it is.
 * `paidAt` is when the money was taken, which must be before the checkout expired (the machine's rule).
 */
export async function creditCheckout(desk: WalletDesk, walletId: string, checkoutId: string, paid: { rail: string; ref: string; paidAt: number }): Promise<CheckoutCredit> {
  const outcome = await desk.change(walletId, (wallet, now): WalletEvent | WalletError => {
    const open = wallet.checkouts[checkoutId];
    if (open?.status !== 'open') return PAID_ALREADY;
    return { type: 'checkoutPaid', at: now, paidAt: paid.paidAt, checkoutId, rail: paid.rail, ref: paid.ref, ...topupOf(wallet, open, now) };
  });
  if ('wallet' in outcome) return { credited: outcome.wallet };
  return outcome.error === PAID_ALREADY ? { paidAlready: true } : outcome;
}
