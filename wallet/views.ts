import type { Wallet } from '../machines/wallet/types.js';

/** Money on the wallet's wire: micro-USD (1 USD = "1000000"). */
export const usd = (amount: bigint | string) => ({ amount: amount.toString(), asset: 'USD' as const });

/** Times in bodies are ISO 8601 strings (WALLET-DECISIONS.md). */
export const isoTime = (ms: number) => new Date(ms).toISOString();

/** A wallet as routes answer it: `balance`, `held` and `available` (= balance − held) on every read. */
export function walletView(wallet: Wallet) {
  return {
    id: wallet.id,
    status: wallet.status,
    label: wallet.label,
    balance: usd(wallet.balance),
    held: usd(wallet.held),
    available: usd(BigInt(wallet.balance) - BigInt(wallet.held)),
    createdAt: isoTime(wallet.createdAt),
    updatedAt: isoTime(wallet.updatedAt),
  };
}

