import type { Checkout, LedgerEntry, LedgerTransaction, Wallet } from './types.js';

/** What happened to a wallet, as its journal records it. Every event carries its own time. */
export type WalletEvent =
  | { type: 'created'; at: number; wallet: Wallet }
  | { type: 'paired'; at: number; pairingId: string; accessTokenHash: string }
  | { type: 'checkoutOpened'; at: number; checkout: Checkout }
  /** The checkout's payment arrived: the wallet is credited, with the transaction and the owner's entry. */
  | { type: 'checkoutPaid'; at: number; checkoutId: string; rail: string; ref: string; transaction: LedgerTransaction; entry: LedgerEntry };
