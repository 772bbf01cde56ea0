import { PeriodicPass } from '../actors/periodic-pass.js';
import type { WalletEvent } from '../machines/wallet/events.js';
import type { Execution, Wallet } from '../machines/wallet/types.js';
import type { Clock } from '../runtime/clock.js';
import { walletError, type WalletError } from './errors.js';
import { executionCaptureOf, executionReleaseOf, expiryOf } from './ledger.js';
import { paymentOf } from './executions/paid-call.js';
import { lostCall } from './executions/lost-call.js';
import type { ProviderPayer, Settlement } from './executions/provider-payer.js';
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

/** An execution the keeper ends no more. */
const FINAL: ReadonlySet<Execution['status']> = new Set(['succeeded', 'failed', 'unanswered']);
/** When to look again at an execution not ended yet: its authorization still usable on the chain; a read that failed; no payer to ask. */
const OPEN_RETRY_MS = 30_000;
const FAILED_RETRY_MS = 60_000;
const NO_PAYER_RETRY_MS = 3_600_000;

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
    /** Reads the chain for ambiguous executions (none: they stay held until a payer is configured). */
    private readonly payer: ProviderPayer | undefined,
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
    return done + (await this.lapsedCheckouts(now)) + (await this.dueExecutions(now));
  }

  /**
   * Executions the keeper ends: one a crash cut off (pending, so never paid: failed, its hold released; paying, so
   * an authorization may have gone: ambiguous), and ambiguous ones once their authorization lapsed, reconciled on
   * the chain: taken (unanswered: charged what it took) or void (failed: released whole). One it cannot end yet is
   * looked at again later, so it never stands in front of the others.
   */
  private async dueExecutions(now: number): Promise<number> {
    let ended = 0;
    for (const due of await this.readModel.dueExecutions(now, BATCH)) {
      try {
        const execution = (await this.desk.read(due.walletId))?.executions?.[due.executionId];
        if (!execution || FINAL.has(execution.status)) {
          await this.readModel.forgetExecution(due);
          continue;
        }
        if (execution.status === 'ambiguous' && !this.payer) {
          await this.readModel.rescheduleExecution(due, now + NO_PAYER_RETRY_MS);
          continue;
        }
        const settlement = execution.status === 'ambiguous' && execution.authorization ? await this.payer!.settlementOf(execution.authorization) : undefined;
        const outcome = await this.desk.change(due.walletId, (wallet, at) => this.nextStep(wallet, due.executionId, settlement, at));
        if ('error' in outcome) await this.readModel.rescheduleExecution(due, now + OPEN_RETRY_MS);
        else ended++;
      } catch (error) {
        console.error(`the wallet keeper could not reconcile execution ${due.executionId}; it tries again in a minute:`, String(error));
        await this.readModel.rescheduleExecution(due, now + FAILED_RETRY_MS).catch(() => undefined);
      }
    }
    return ended;
  }

  private nextStep(wallet: Wallet, executionId: string, settlement: Settlement | undefined, at: number): WalletEvent | WalletError {
    const execution = wallet.executions?.[executionId];
    const cutOff = 'no outcome was recorded (the service stopped during the call)';
    switch (execution?.status) {
      case 'pending':
        return { type: 'executionFailed', at, executionId, reason: cutOff, ...executionReleaseOf(wallet, execution, at) };
      case 'paying':
        return lostCall(execution, at, cutOff);
      case 'ambiguous': {
        if (!settlement || !execution.authorization || settlement.state === 'open') return NOT_DUE;
        if (settlement.state === 'void') return { type: 'executionLapsed', at, executionId, reason: `${execution.error}; reconciled: the payment lapsed untaken`, ...executionReleaseOf(wallet, execution, at) };
        const charged = BigInt(execution.authorization.charged);
        const reason = `${execution.error}; reconciled: the provider took the payment`;
        return { type: 'executionUnanswered', at, executionId, charged: charged.toString(), reason, providerPayment: paymentOf(execution.authorization, settlement.reference), ...executionCaptureOf(wallet, execution, charged, at) };
      }
      default:
        return NOT_DUE;
    }
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
