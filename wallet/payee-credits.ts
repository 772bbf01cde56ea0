import type { WalletEvent } from '../machines/wallet/events.js';
import { walletError, type WalletError } from './errors.js';
import { creditOf } from './ledger.js';
import type { WalletDesk } from './wallet-desk.js';

/** A payee already credited for the reservation: nothing more to do. */
const CREDITED_ALREADY: WalletError = walletError('invalid_request', 'credited already');

/**
 * Credits a payee once for a settled reservation (its machine refuses a second credit of the same reservation):
 * the settle route does it at once, the keeper for any whose settle's caller went away in between.
 */
export async function creditPayee(desk: WalletDesk, walletId: string, reservationId: string, amount: bigint): Promise<void> {
  const outcome = await desk.change(walletId, (wallet, now): WalletEvent | WalletError =>
    wallet.creditsReceived[reservationId] !== undefined ? CREDITED_ALREADY : { type: 'credited', at: now, reservationId, amount: amount.toString(), ...creditOf(wallet, reservationId, amount, now) },
  );
  if ('error' in outcome && outcome.error !== CREDITED_ALREADY) throw new Error(`crediting ${walletId} for ${reservationId}: ${outcome.error.message}`);
}
