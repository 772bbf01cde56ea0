import type { WalletEvent } from '../machines/wallet/events.js';
import type { Checkout, Execution, LedgerEntry, LedgerTransaction, Reservation, Settlement, Wallet } from '../machines/wallet/types.js';
import type { WalletEntry } from './journal.js';
import { newId } from './secrets.js';
import { isoTime, usd } from './views.js';

/** The accounts of the double-entry ledger (WALLET-DECISIONS.md). */
export const accounts = {
  available: (walletId: string) => `wallet:${walletId}:available`,
  held: (walletId: string) => `wallet:${walletId}:held`,
  funding: 'system:funding',
  /** Credit on its way from a settling wallet to the wallets it pays (each credit takes it out once). */
  transfers: 'system:transfers',
  /** What executions paid providers. */
  providerSpend: 'system:provider_spend',
} as const;

type Change = { balance: bigint; held: bigint };

/** The owner's entry for a change of `amount` (signed) on the wallet, with its balances after `after`. */
function entryOn(type: LedgerEntry['type'], amount: bigint, after: Change, reference: LedgerEntry['reference'], transactionId: string, at: number): LedgerEntry {
  return { id: newId('le'), type, amount: amount.toString(), balanceAfter: after.balance.toString(), availableAfter: (after.balance - after.held).toString(), reference, transactionId, createdAt: at };
}

const now = (wallet: Wallet): Change => ({ balance: BigInt(wallet.balance), held: BigInt(wallet.held) });
const reservationRef = (id: string) => ({ kind: 'reservation', id });

type Reference = LedgerEntry['reference'];
const executionRef = (id: string) => ({ kind: 'execution', id });

/** `amount` of available credit held, for what `reference` names. */
function holdFor(wallet: Wallet, amount: bigint, reference: Reference, at: number) {
  const transaction: LedgerTransaction = { id: newId('tx'), legs: [{ account: accounts.available(wallet.id), amount: `-${amount}` }, { account: accounts.held(wallet.id), amount: `${amount}` }] };
  const after = { ...now(wallet), held: now(wallet).held + amount };
  return { transaction, entry: entryOn('hold', -amount, after, reference, transaction.id, at) };
}

/** A hold of `amount` back to available. */
function releaseFor(wallet: Wallet, amount: bigint, reference: Reference, at: number) {
  const transaction: LedgerTransaction = { id: newId('tx'), legs: [{ account: accounts.held(wallet.id), amount: `-${amount}` }, { account: accounts.available(wallet.id), amount: `${amount}` }] };
  const after = { ...now(wallet), held: now(wallet).held - amount };
  return { transaction, entry: entryOn('hold_release', amount, after, reference, transaction.id, at) };
}

/**
 * A hold of `amount` ended with `debit` leaving to `account`, the rest available again. Shown as the hold coming back
 * whole, then the debit leaving: each entry with the balances after it, so the owner's entries add up to the balance
 * (the hold already took the amount out of what is available).
 */
function debitFor(wallet: Wallet, amount: bigint, debit: bigint, account: string, reference: Reference, at: number) {
  const transaction: LedgerTransaction = {
    id: newId('tx'),
    legs: [
      { account: accounts.held(wallet.id), amount: `-${amount}` },
      { account, amount: `${debit}` },
      { account: accounts.available(wallet.id), amount: `${amount - debit}` },
    ],
  };
  const released = { ...now(wallet), held: now(wallet).held - amount };
  const debited = { ...released, balance: released.balance - debit };
  const entries = [entryOn('hold_release', amount, released, reference, transaction.id, at), ...(debit > 0n ? [entryOn('debit', -debit, debited, reference, transaction.id, at)] : [])];
  return { transaction, entries };
}

/** Available credit held for a reservation. */
export const holdOf = (wallet: Wallet, reservation: Reservation, at: number) => holdFor(wallet, BigInt(reservation.amount), reservationRef(reservation.id), at);

/** A held reservation back to available. */
export const releaseOf = (wallet: Wallet, reservation: Reservation, at: number) => releaseFor(wallet, BigInt(reservation.amount), reservationRef(reservation.id), at);

/** A hold past its `expiresAt`, released whole (by the keeper, or by a release that came too late). */
export function expiryOf(wallet: Wallet, reservation: Reservation, at: number): WalletEvent {
  return { type: 'reservationExpired', at, reservationId: reservation.id, ...releaseOf(wallet, reservation, at) };
}

/** A held reservation settled: the debit leaves for the payees (through `system:transfers`), the rest is available again. */
export const settlementOf = (wallet: Wallet, reservation: Reservation, settlement: Settlement, at: number) =>
  debitFor(wallet, BigInt(reservation.amount), BigInt(settlement.debit), accounts.transfers, reservationRef(reservation.id), at);

/** An execution's price held. */
export const executionHoldOf = (wallet: Wallet, execution: Execution, at: number) => holdFor(wallet, BigInt(execution.reserved), executionRef(execution.id), at);

/** An execution captured: what it was charged to `system:provider_spend`, the rest of its hold back. */
export const executionCaptureOf = (wallet: Wallet, execution: Execution, charged: bigint, at: number) =>
  debitFor(wallet, BigInt(execution.reserved), charged, accounts.providerSpend, executionRef(execution.id), at);

/** A failed execution's hold back whole. */
export const executionReleaseOf = (wallet: Wallet, execution: Execution, at: number) => releaseFor(wallet, BigInt(execution.reserved), executionRef(execution.id), at);

/** A payee's share of another wallet's settlement, out of `system:transfers`. */
export function creditOf(wallet: Wallet, reservationId: string, amount: bigint, at: number) {
  const transaction: LedgerTransaction = { id: newId('tx'), legs: [{ account: accounts.transfers, amount: `-${amount}` }, { account: accounts.available(wallet.id), amount: `${amount}` }] };
  const after = { ...now(wallet), balance: now(wallet).balance + amount };
  return { transaction, entry: entryOn('credit', amount, after, reservationRef(reservationId), transaction.id, at) };
}

/** A paid checkout as a transaction (funding → the wallet's available credit) and the owner's entry. */
export function topupOf(wallet: Wallet, checkout: Checkout, at: number): { transaction: LedgerTransaction; entry: LedgerEntry } {
  const transaction: LedgerTransaction = {
    id: newId('tx'),
    legs: [
      { account: accounts.funding, amount: `-${checkout.amount}` },
      { account: accounts.available(wallet.id), amount: checkout.amount },
    ],
  };
  const balanceAfter = BigInt(wallet.balance) + BigInt(checkout.amount);
  const entry: LedgerEntry = {
    id: newId('le'),
    type: 'topup',
    amount: checkout.amount,
    balanceAfter: balanceAfter.toString(),
    availableAfter: (balanceAfter - BigInt(wallet.held)).toString(),
    reference: { kind: 'checkout', id: checkout.id },
    transactionId: transaction.id,
    createdAt: at,
  };
  return { transaction, entry };
}

/**
 * The owner's ledger entries in a wallet's history, newest first, each with its position (the cursor): the
 * version that made it and its place among that version's entries.
 */
export function ledgerEntries(history: WalletEntry[]): { position: number; entry: LedgerEntry }[] {
  return history.flatMap(({ version, event }) => entriesOf(event).map((entry, index) => ({ position: version * 16 + index, entry }))).reverse();
}

function entriesOf(event: WalletEntry['event']): LedgerEntry[] {
  switch (event.type) {
    case 'checkoutPaid':
    case 'reserved':
    case 'reservationReleased':
    case 'reservationExpired':
    case 'credited':
      return [event.entry];
    case 'executionStarted':
    case 'executionFailed':
    case 'executionLapsed':
      return [event.entry];
    case 'reservationSettled':
    case 'executionSucceeded':
    case 'executionUnanswered':
      return event.entries;
    default:
      return [];
  }
}

export const entryView = (entry: LedgerEntry) => ({
  id: entry.id,
  type: entry.type,
  amount: usd(entry.amount),
  balanceAfter: usd(entry.balanceAfter),
  availableAfter: usd(entry.availableAfter),
  reference: entry.reference,
  transactionId: entry.transactionId,
  createdAt: isoTime(entry.createdAt),
});
