import { PeriodicPass } from '../actors/periodic-pass.js';
import type { WalletEvent } from '../machines/wallet/events.js';
import type { Clock } from '../runtime/clock.js';
import { walletError, type WalletError } from './errors.js';
import { releaseOf } from './ledger.js';
import { creditPayee } from './payee-credits.js';
import type { WalletReadModel } from './read-model.js';
import type { WalletDesk } from './wallet-desk.js';

const BATCH = 500;
/** A settle's own request credits its payees at once; the keeper steps in only for credits older than this. */
const OWED_GRACE_MS = 30_000;

/** Nothing to do: the hold ended (or its time was moved) since the read model listed it. */
const NOT_DUE: WalletError = walletError('invalid_request', 'not due');

/**
 * The wallet service's keeper: releases holds whose `expiresAt` passed (status `expired`, the credit available
 * again), and applies settlement credits a payee never received (the settle's caller went away between the
 * payer's entry and the payee's). Every node runs it; each change is decided on the wallet's newest state, so two
 * keepers, or a keeper and a request, never apply anything twice.
 */
export class WalletKeeper extends PeriodicPass {
  constructor(
    private readonly desk: WalletDesk,
    private readonly readModel: WalletReadModel,
    private readonly clock: Clock,
  ) {
    super('the wallet keeper');
  }

  /** One pass; resolves to the number of holds expired and credits applied. */
  protected async pass(): Promise<number> {
    const now = this.clock.now();
    let done = 0;
    for (const { walletId, reservationId } of await this.readModel.dueHolds(now, BATCH)) {
      const outcome = await this.desk.change(walletId, (wallet, at): WalletEvent | WalletError => {
        const reservation = wallet.reservations[reservationId];
        if (reservation?.status !== 'held' || at < reservation.expiresAt) return NOT_DUE;
        return { type: 'reservationExpired', at, reservationId, ...releaseOf(wallet, reservation, at) };
      });
      if (!('error' in outcome)) done++;
    }
    for (const owed of await this.readModel.owedCredits(now - OWED_GRACE_MS, BATCH)) {
      try {
        await creditPayee(this.desk, owed.walletId, owed.reservationId, BigInt(owed.amount));
        done++;
      } catch (error) {
        console.error('the wallet keeper could not apply a credit; the next pass tries again:', String(error));
      }
    }
    return done;
  }
}
