/** A wallet's lifecycle (WALLET-DECISIONS.md): paired once, then active, suspended and back, closed for good. */
export const WALLET_STATUSES = ['pending_pairing', 'active', 'suspended', 'closed'] as const;
export type WalletStatus = (typeof WALLET_STATUSES)[number];

/** The one-time pairing a new wallet is claimed with: its token and code are stored hashed, elsewhere. */
export interface Pairing {
  id: string;
  expiresAt: number;
  claimedAt: number | null;
}

/** A hosted checkout that tops the wallet up once paid (WALLET-DECISIONS.md, Checkout). */
export interface Checkout {
  id: string;
  amount: string;
  /** `expired` is never stored: an open checkout past `expiresAt` reads as expired and can no longer be paid. */
  status: 'open' | 'completed';
  createdAt: number;
  expiresAt: number;
  completedAt: number | null;
  successUrl: string | null;
  cancelUrl: string | null;
  /** The rail that paid it and the rail's reference. */
  paidWith: { rail: string; ref: string } | null;
}

/** What a reservation holds credit for: a party's funding of a pact (WALLET-DECISIONS.md). */
export interface Activity {
  kind: 'pact';
  pactId: string;
  party: string;
  role: string;
}

/** How a held reservation ended in a settlement: what it debited and to whom it went. */
export interface Settlement {
  activityState: 'SETTLED' | 'CANCELLED';
  debit: string;
  credits: { walletId: string; amount: string }[];
  reference: string;
  /** SHA-256 of the settle request's body: the same body again is a replay, another is refused. */
  bodyHash: string;
}

/** Credit held on a wallet for an agent activity, settled, released or expired exactly once. */
export interface Reservation {
  id: string;
  amount: string;
  /** `expired`: released whole by the keeper once `expiresAt` passed (until then a lapsed hold reads expired). */
  status: 'held' | 'settled' | 'released' | 'expired';
  activity: Activity;
  memo: string | null;
  /** SHA-256 of the reserve request's body (a replay with another is refused). */
  bodyHash: string;
  createdAt: number;
  expiresAt: number;
  finalizedAt: number | null;
  settlement: Settlement | null;
  releaseReason: string | null;
  ledgerTxIds: string[];
}

/** How an execution's provider is reached and paid: plain HTTP (priced by the catalog), x402, mpp, or the test hooks' mock. */
export type ExecutionRail = 'http' | 'x402' | 'mpp' | 'mock';

/**
 * An EIP-3009 authorization the service's payer key signed for a provider (x402 `exact` or mpp `evm` charge): what
 * reconciliation reads on the chain to learn whether the provider took it.
 */
export interface ProviderAuthorization {
  /** CAIP-2, e.g. `eip155:84532`. */
  network: string;
  /** The token's address. */
  asset: string;
  from: string;
  to: string;
  nonce: string;
  /** What it pays, in the token's base units, and that as micro-USD (what the wallet is charged if it is taken). */
  value: string;
  charged: string;
  /** Unix seconds: after this the authorization can never be used. */
  validBefore: number;
  /** The chain's block when it was signed: its use is looked for from there. */
  fromBlock: string;
}

/**
 * A call to a provider paid from the wallet: its price held, then captured on success or released on failure.
 * `paying` once the service's payer signed an authorization for the provider; `ambiguous` when the provider may have
 * been paid but no answer came (held until reconciled, never retried); `unanswered` when it was paid and no usable
 * answer came (charged what it took).
 */
export interface Execution {
  id: string;
  capabilityId: string;
  rail: ExecutionRail;
  provider: { registryId: string | null; resource: string; method: string };
  status: 'pending' | 'paying' | 'succeeded' | 'failed' | 'ambiguous' | 'unanswered';
  /** micro-USD: the price quoted, held, charged and given back. */
  quoted: string;
  reserved: string;
  charged: string;
  released: string;
  inputHash: string;
  outputHash: string | null;
  providerPayment: { network?: string; reference?: string; payTo?: string } | null;
  /** The authorization signed for the provider (x402, mpp), once signed. */
  authorization: ProviderAuthorization | null;
  error: string | null;
  receiptId: string;
  createdAt: number;
  finishedAt: number | null;
  ledgerTxIds: string[];
}

/** One leg of a ledger transaction: an account and a signed micro-USD amount. */
export interface LedgerLeg {
  account: string;
  amount: string;
}

/** A double-entry transaction: its legs sum to zero. */
export interface LedgerTransaction {
  id: string;
  legs: LedgerLeg[];
}

/** What the owner sees of a transaction on the wallet (WALLET-DECISIONS.md, Wallet, balances, ledger). */
export interface LedgerEntry {
  id: string;
  type: 'topup' | 'hold' | 'hold_release' | 'debit' | 'credit' | 'refund' | 'adjustment';
  /** Signed: a leading `-` for what leaves the wallet. */
  amount: string;
  balanceAfter: string;
  availableAfter: string;
  reference: { kind: string; id: string };
  transactionId: string;
  createdAt: number;
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
  checkouts: Record<string, Checkout>;
  reservations: Record<string, Reservation>;
  /** Provider calls paid from the wallet (absent on wallets made before executions existed). */
  executions?: Record<string, Execution>;
  /** Credits received from other wallets' settlements, by `<reservationId>`: each applied once. */
  creditsReceived: Record<string, string>;
  createdAt: number;
  updatedAt: number;
  /** Entries applied: every journal entry of the wallet increments it. */
  version: number;
}
