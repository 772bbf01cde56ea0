import type { AbstractBatchOperation } from 'abstract-level';
import type { LedgerEntry } from '../machines/wallet/types.js';
import { pad } from '../projection/time-pages.js';
import type { JsonLevel } from '../storage/level.js';
import type { WalletEntry } from './journal.js';
import { ledgerEntries } from './ledger.js';

/** A hold still held, by when it lapses. */
export interface DueHold {
  walletId: string;
  reservationId: string;
  expiresAt: number;
}

/** A settlement's credit to a payee wallet not yet applied there (the settle's caller went away between the two). */
export interface OwedCredit {
  reservationId: string;
  walletId: string;
  amount: string;
  settledAt: number;
}

type Operation = AbstractBatchOperation<JsonLevel, string, unknown>;

/**
 * What the wallet service reads without replaying a journal, in LevelDB, built only from the wallets' journal:
 * each wallet's ledger entries by position (the `/v1/me` pages), the holds still held by expiry (the keeper's
 * work), and settlement credits not yet applied to their payees (the keeper's too).
 */
export class WalletReadModel {
  private readonly ledger;
  private readonly holds;
  private readonly holdKeys;
  private readonly owed;
  private readonly meta;

  constructor(private readonly level: JsonLevel) {
    this.ledger = level.sublevel<string, string>('wallet-ledger', { valueEncoding: 'utf8' });
    this.holds = level.sublevel<string, DueHold>('wallet-holds', { valueEncoding: 'json' });
    /** `<walletId>!<reservationId>` → its key in `holds`, to take it out when the hold ends. */
    this.holdKeys = level.sublevel<string, string>('wallet-hold-keys', { valueEncoding: 'utf8' });
    this.owed = level.sublevel<string, OwedCredit>('wallet-owed', { valueEncoding: 'json' });
    this.meta = level.sublevel<string, unknown>('wallet-meta', { valueEncoding: 'json' });
  }

  /** Makes the stored model one of the journal created at `streamCreated` (another's is cleared and rebuilt). */
  async open(streamCreated: string): Promise<void> {
    if ((await this.meta.get('stream')) === streamCreated) return;
    for (const sublevel of [this.ledger, this.holds, this.holdKeys, this.owed, this.meta]) await sublevel.clear();
    await this.meta.put('stream', streamCreated);
  }

  /** The journal position the model holds. */
  async reachedSeq(): Promise<number> {
    return ((await this.meta.get('journalSeq')) as number | undefined) ?? 0;
  }

  /** Writes what `entries` (in journal order) change, and the position reached, in one batch. */
  async putAll(entries: WalletEntry[], reachedSeq: number): Promise<void> {
    const operations: Operation[] = [];
    const holdKeys = new Map<string, string>();
    const holdKeyOf = async (id: string) => holdKeys.get(id) ?? (await this.holdKeys.get(id));
    for (const entry of entries) {
      for (const { position, entry: line } of ledgerEntries([entry])) operations.push({ type: 'put', key: ledgerKey(entry.walletId, position), value: JSON.stringify(line), sublevel: this.ledger });
      const { event } = entry;
      if (event.type === 'reserved') {
        const id = `${entry.walletId}!${event.reservation.id}`;
        const key = `${pad(event.reservation.expiresAt)}!${id}`;
        holdKeys.set(id, key);
        const due: DueHold = { walletId: entry.walletId, reservationId: event.reservation.id, expiresAt: event.reservation.expiresAt };
        operations.push({ type: 'put', key, value: due, sublevel: this.holds }, { type: 'put', key: id, value: key, sublevel: this.holdKeys });
      }
      if (event.type === 'reservationSettled' || event.type === 'reservationReleased' || event.type === 'reservationExpired') {
        const id = `${entry.walletId}!${event.reservationId}`;
        const key = await holdKeyOf(id);
        if (key) operations.push({ type: 'del', key, sublevel: this.holds }, { type: 'del', key: id, sublevel: this.holdKeys });
      }
      if (event.type === 'reservationSettled') {
        for (const credit of event.settlement.credits) {
          const owed: OwedCredit = { reservationId: event.reservationId, walletId: credit.walletId, amount: credit.amount, settledAt: event.at };
          operations.push({ type: 'put', key: `${event.reservationId}!${credit.walletId}`, value: owed, sublevel: this.owed });
        }
      }
      if (event.type === 'credited') operations.push({ type: 'del', key: `${event.reservationId}!${entry.walletId}`, sublevel: this.owed });
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
  async dueHolds(now: number, limit: number): Promise<DueHold[]> {
    const due: DueHold[] = [];
    for await (const value of this.holds.values({ lte: `${pad(now)}!~`, limit })) due.push(value);
    return due;
  }

  /** Credits settled at or before `before` and not yet applied to their payee. */
  async owedCredits(before: number, limit: number): Promise<OwedCredit[]> {
    const owed: OwedCredit[] = [];
    for await (const value of this.owed.values({ limit })) if (value.settledAt <= before) owed.push(value);
    return owed;
  }
}

const ledgerKey = (walletId: string, position: number) => `${walletId}!${pad(position)}`;
