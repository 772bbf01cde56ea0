import type { Wallet } from './types.js';

/** What happened to a wallet, as its journal records it. Every event carries its own time. */
export type WalletEvent =
  | { type: 'created'; at: number; wallet: Wallet }
  | { type: 'paired'; at: number; pairingId: string; accessTokenHash: string };
