import type { AbstractBatchOperation } from 'abstract-level';
import type { LedgerEntry } from '../machines/wallet/types.js';
import { pad } from '../projection/time-pages.js';
import { TimeIndex } from './time-index.js';
import { STALE_EXECUTION_MS } from './executions/provider-call.js';
import type { JsonLevel } from '../storage/level.js';
import type { WalletEntry } from './journal.js';
import { ledgerEntries } from './ledger.js';

/** A hold still held, by when it lapses. */
export interface DueHold {
  walletId: string;
  reservationId: string;
  expiresAt: number;
}

/** A checkout still open, by when it expires: after that the keeper looks for money taken and never credited. */
export interface OpenCheckout {
  walletId: string;
  checkoutId: string;
  expiresAt: number;
}

/** An execution not yet ended, by when the keeper should look at it: a call cut off by a crash, or one to reconcile. */
export interface UnfinishedExecution {
  walletId: string;
  executionId: string;
}

/** A settlement's credit to a payee wallet not yet applied there (the settle's caller went away between the two). */
export interface OwedCredit {
  reservationId: string;
  walletId: string;
  amount: string;
  settledAt: number;
}

type Operation = AbstractBatchOperation<JsonLevel, string, unknown>;
/** Changes when the keys change: a model stored in another layout is rebuilt. */
const LAYOUT = 5;

/**
 * What the wallet service reads without replaying a journal, in LevelDB, built only from the wallets' journal:
 * each wallet's ledger entries by position (the `/v1/me` pages), and the keeper's work: holds still held by expiry,
 * settlement credits not yet applied to their payees, checkouts still open by expiry.
 */
export class WalletReadModel {
  private readonly ledger;
  /** Held reservations by `expiresAt` (id `<walletId>!<reservationId>`). */
  private readonly holds;
  /** Credits owed by `settledAt`, oldest first, so a burst of new settles never hides an old one (id `<reservationId>!<payee>`). */
  private readonly owed;
  /** Open checkouts by `expiresAt` (id `<walletId>!<checkoutId>`). */
  private readonly checkouts;
  /** Unfinished executions by when the keeper should look at them (id `<walletId>!<executionId>`). */
  private readonly executions;
  private readonly meta;

  constructor(private readonly level: JsonLevel) {
    this.ledger = level.sublevel<string, string>('wallet-ledger', { valueEncoding: 'utf8' });
    this.holds = new TimeIndex<DueHold>(level, 'wallet-holds');
    this.owed = new TimeIndex<OwedCredit>(level, 'wallet-owed');
    this.checkouts = new TimeIndex<OpenCheckout>(level, 'wallet-checkouts');
    this.executions = new TimeIndex<UnfinishedExecution>(level, 'wallet-executions');
    this.meta = level.sublevel<string, unknown>('wallet-meta', { valueEncoding: 'json' });
  }

  /**
   * Makes the stored model one of the journal created at `streamCreated`, in this layout: another journal's, or an
   * older layout, is cleared and rebuilt from the journal.
   */
  async open(streamCreated: string): Promise<void> {
    const built = `${streamCreated}#layout${LAYOUT}`;
    if ((await this.meta.get('stream')) === built) return;
    for (const part of [this.ledger, this.holds, this.owed, this.checkouts, this.executions, this.meta]) await part.clear();
    await this.meta.put('stream', built);
  }

  /** The journal position the model holds. */
  async reachedSeq(): Promise<number> {
    return ((await this.meta.get('journalSeq')) as number | undefined) ?? 0;
  }

  /** Writes what `entries` (in journal order) change, and the position reached, in one batch. */
  async putAll(entries: WalletEntry[], reachedSeq: number): Promise<void> {
    const operations: Operation[] = [];
    const [holds, owed, checkouts, executions] = [this.holds.batch(operations), this.owed.batch(operations), this.checkouts.batch(operations), this.executions.batch(operations)];
    for (const entry of entries) {
      const { walletId, event } = entry;
      for (const { position, entry: line } of ledgerEntries([entry])) operations.push({ type: 'put', key: ledgerKey(walletId, position), value: JSON.stringify(line), sublevel: this.ledger });
      if (event.type === 'checkoutOpened') {
        const { id: checkoutId, expiresAt } = event.checkout;
        checkouts.put(`${walletId}!${checkoutId}`, expiresAt, { walletId, checkoutId, expiresAt });
      }
      if (event.type === 'checkoutPaid') await checkouts.remove(`${walletId}!${event.checkoutId}`);
      if (event.type === 'reserved') {
        const { id: reservationId, expiresAt } = event.reservation;
        holds.put(`${walletId}!${reservationId}`, expiresAt, { walletId, reservationId, expiresAt });
      }
      if (event.type === 'reservationSettled' || event.type === 'reservationReleased' || event.type === 'reservationExpired') await holds.remove(`${walletId}!${event.reservationId}`);
      if (event.type === 'reservationSettled') {
        for (const credit of event.settlement.credits) {
          owed.put(`${event.reservationId}!${credit.walletId}`, event.at, { reservationId: event.reservationId, walletId: credit.walletId, amount: credit.amount, settledAt: event.at });
        }
      }
      if (event.type === 'credited') await owed.remove(`${event.reservationId}!${walletId}`);
      // A call no outcome follows within any call's time was cut off; an ambiguous one is reconciled once its authorization lapses.
      if (event.type === 'executionStarted') executions.put(`${walletId}!${event.execution.id}`, event.at + STALE_EXECUTION_MS, { walletId, executionId: event.execution.id });
      if (event.type === 'executionAmbiguous') await executions.move(`${walletId}!${event.executionId}`, event.reconcileAt, { walletId, executionId: event.executionId });
      if (event.type === 'executionSucceeded' || event.type === 'executionUnanswered' || event.type === 'executionFailed' || event.type === 'executionLapsed') await executions.remove(`${walletId}!${event.executionId}`);
    }
    operations.push({ type: 'put', key: 'journalSeq', value: reachedSeq, sublevel: this.meta });
    await this.level.batch(operations);
  }

  /** A page of the wallet's ledger, newest first, below position `before`; one more than `limit` tells a next page. */
  async ledgerPage(walletId: string, before: number, limit: number): Promise<{ position: number; entry: LedgerEntry }[]> {
    const upper = Number.isFinite(before) ? ledgerKey(walletId, before) : `${walletId}!~`;
    const page: { position: number; entry: LedgerEntry }[] = [];
    for await (const [key, text] of this.ledger.iterator({ gte: `${walletId}!`, lt: upper, reverse: true, limit: limit + 1 })) {
      page.push({ position: Number(key.slice(walletId.length + 1)), entry: JSON.parse(text) as LedgerEntry });
    }
    return page;
  }

  /** Holds still held whose `expiresAt` is at or before `now`, earliest first. */
  dueHolds(now: number, limit: number): Promise<DueHold[]> {
    return this.holds.until(now, limit);
  }

  /** Checkouts still open that expired at or before `before`, earliest first. */
  lapsedCheckouts(before: number, limit: number): Promise<OpenCheckout[]> {
    return this.checkouts.until(before, limit);
  }

  /** Forgets an expired checkout the keeper found no money for (none can come any more). */
  forgetCheckout({ walletId, checkoutId }: OpenCheckout): Promise<void> {
    return this.checkouts.remove(`${walletId}!${checkoutId}`);
  }

  /** Looks at an unfinished execution again at `at` (the keeper could not end it yet). */
  async rescheduleExecution(due: UnfinishedExecution, at: number): Promise<void> {
    const operations: Operation[] = [];
    await this.executions.batch(operations).move(`${due.walletId}!${due.executionId}`, at, due);
    await this.level.batch(operations);
  }

  /** Takes an execution the keeper found ended out of the index. */
  forgetExecution(due: UnfinishedExecution): Promise<void> {
    return this.executions.remove(`${due.walletId}!${due.executionId}`);
  }

  /** Unfinished executions due for the keeper at `now`, earliest first. */
  dueExecutions(now: number, limit: number): Promise<UnfinishedExecution[]> {
    return this.executions.until(now, limit);
  }

  /** Credits settled at or before `before` and not yet applied to their payee, oldest first. */
  owedCredits(before: number, limit: number): Promise<OwedCredit[]> {
    return this.owed.until(before, limit);
  }
}

const ledgerKey = (walletId: string, position: number) => `${walletId}!${pad(position)}`;
