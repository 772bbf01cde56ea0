/** A wallet's lifecycle (WALLET-DECISIONS.md): paired once, then active, suspended and back, closed for good. */
export const WALLET_STATUSES = ['pending_pairing', 'active', 'suspended', 'closed'] as const;
export type WalletStatus = (typeof WALLET_STATUSES)[number];

/** The one-time pairing a new wallet is claimed with: its token and code are stored hashed, elsewhere. */
export interface Pairing {
  id: string;
  expiresAt: number;
  claimedAt: number | null;
}

/** A wallet as its actor holds it. Amounts are micro-USD integer strings; times are milliseconds. */
export interface Wallet {
  id: string;
  status: WalletStatus;
  label: string | null;
  ownerEmail: string | null;
  /** Settled credit, and the part of it held for open reservations and executions. */
  balance: string;
  held: string;
  pairing: Pairing;
  /** SHA-256 (hex) of the access token the pairing issued: the one bearer this wallet answers to. */
  accessTokenHash: string | null;
  createdAt: number;
  updatedAt: number;
  /** Entries applied: every journal entry of the wallet increments it. */
  version: number;
}
