import { PeriodicPass } from '../actors/periodic-pass.js';
import type { WalletEvent } from '../machines/wallet/events.js';
import type { Clock } from '../runtime/clock.js';
import { walletError, type WalletError } from './errors.js';
import { executionReleaseOf, expiryOf } from './ledger.js';
import { CALL_TIMEOUT_MS } from './executions/providers.js';
import { checkoutCollectKey, creditCheckout } from './checkout-credits.js';
import { creditPayee } from './payee-credits.js';
import type { Rail } from '../rails/rail.js';
import type { WalletReadModel } from './read-model.js';
import type { WalletDesk } from './wallet-desk.js';

const BATCH = 500;
/** A settle's own request credits its payees at once; the keeper steps in only for credits older than this. */
const OWED_GRACE_MS = 30_000;
/** After a checkout expires, how long a payment begun before may still be recorded (a collect waits seconds; a wide margin). */
const CHECKOUT_PAYMENTS_END_MS = 15 * 60_000;
/** An execution pending this long was cut off by a crash: no provider call lasts it (CALL_TIMEOUT_MS, and a margin). */
const STALE_EXECUTION_MS = CALL_TIMEOUT_MS + 90_000;

/** Nothing to do: the hold ended (or its time was moved) since the read model listed it. */
const NOT_DUE: WalletError = walletError('invalid_request', 'not due');

/**
 * The wallet service's keeper: releases holds whose `expiresAt` passed (status `expired`, the credit available
 * again), applies settlement credits a payee never received (the settle's caller went away between the payer's
 * entry and the payee's), and credits checkouts whose money a rail took but a crash kept from the wallet. Every node runs it; each change is decided on the wallet's newest state, so two
 * keepers, or a keeper and a request, never apply anything twice.
 */
export class WalletKeeper extends PeriodicPass {
  constructor(
    private readonly desk: WalletDesk,
    private readonly readModel: WalletReadModel,
    private readonly clock: Clock,
    /** Every rail that may have taken a checkout's money (a rail dropped from the checkout rails still holds what it took). */
    private readonly paymentRails: readonly Rail[],
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
        return expiryOf(wallet, reservation, at);
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
    return done + (await this.lapsedCheckouts(now)) + (await this.staleExecutions(now));
  }

  /**
   * Executions a crash (or a journal that would not take the outcome) left pending past any call's time: one whose
   * provider is never paid on the wire (plain HTTP, the mock) failed, its hold released; on x402 or mpp a payment may
   * have gone, so it becomes ambiguous, held for reconciliation.
   */
  private async staleExecutions(now: number): Promise<number> {
    let ended = 0;
    for (const stale of await this.readModel.staleExecutions(now - STALE_EXECUTION_MS, BATCH)) {
      const outcome = await this.desk.change(stale.walletId, (wallet, at): WalletEvent | WalletError => {
        const execution = wallet.executions?.[stale.executionId];
        if (execution?.status !== 'pending') return NOT_DUE;
        const reason = 'no outcome was recorded (the service stopped during the call)';
        if (execution.rail === 'x402' || execution.rail === 'mpp') return { type: 'executionAmbiguous', at, executionId: execution.id, reason };
        return { type: 'executionFailed', at, executionId: execution.id, reason, ...executionReleaseOf(wallet, execution, at) };
      });
      if (!('error' in outcome)) ended++;
    }
    return ended;
  }

  /**
   * Checkouts expired long enough that no payment begun before the expiry is still under way:
   * money a rail took for one, which a crash kept from being credited, is credited now; the rest is forgotten.
   */
  private async lapsedCheckouts(now: number): Promise<number> {
    let credited = 0;
    for (const lapsed of await this.readModel.lapsedCheckouts(now - CHECKOUT_PAYMENTS_END_MS, BATCH)) {
      try {
        const taken = await this.takenFor(lapsed.checkoutId);
        if (!taken) {
          await this.readModel.forgetCheckout(lapsed);
          continue;
        }
        const outcome = await creditCheckout(this.desk, lapsed.walletId, lapsed.checkoutId, { ...taken, paidAt: lapsed.expiresAt - 1 });
        if ('error' in outcome) throw new Error(outcome.error.message);
        if ('credited' in outcome) credited++;
      } catch (error) {
        console.error(`the wallet keeper could not settle checkout ${lapsed.checkoutId}; the next pass tries again:`, String(error));
      }
    }
    return credited;
  }

  /** The rail that took money for the checkout, and its reference. */
  private async takenFor(checkoutId: string): Promise<{ rail: string; ref: string } | undefined> {
    for (const rail of this.paymentRails) {
      const receipt = await rail.collected(checkoutCollectKey(checkoutId));
      if (receipt) return { rail: rail.name, ref: receipt.ref };
    }
    return undefined;
  }
}
