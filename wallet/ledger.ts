import type { Checkout, LedgerEntry, LedgerTransaction, Wallet } from '../machines/wallet/types.js';
import type { WalletEntry } from './journal.js';
import { newId } from './secrets.js';
import { isoTime, usd } from './views.js';

/** The accounts of the double-entry ledger (WALLET-DECISIONS.md). */
export const accounts = {
  available: (walletId: string) => `wallet:${walletId}:available`,
  held: (walletId: string) => `wallet:${walletId}:held`,
  funding: 'system:funding',
} as const;

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

/** The owner's ledger entries in a wallet's history, newest first, with the version that made each (the cursor). */
export function ledgerEntries(history: WalletEntry[]): { version: number; entry: LedgerEntry }[] {
  return history.flatMap(({ version, event }) => (event.type === 'checkoutPaid' ? [{ version, entry: event.entry }] : [])).reverse();
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
