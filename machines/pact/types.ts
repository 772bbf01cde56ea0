import type { Money } from '../../protocol/money.js';
import type { PartyId } from '../../protocol/party.js';

export const PACT_STATES = ['CREATED', 'ACTIVE', 'PROPOSED', 'DISPUTED', 'SETTLED', 'CANCELLED'] as const;
export type PactState = (typeof PACT_STATES)[number];
export const RAILS = ['mock', 'x402', 'mpp', 'credit'] as const;
export type RailName = (typeof RAILS)[number];

export interface Windows {
  fund: number;
  perform: number;
  object: number;
}

export interface EvaluatorPolicy {
  pubkey: PartyId;
  promptVersion: string;
  model: string;
  timeoutMs: number;
  onFailure: 'refund';
}

export interface PartySpec {
  party: PartyId;
  deposit: Money;
  bond: Money;
  required: boolean;
}

/** A party as the pact records it. `paidPot` / `paidBond` are what it paid into escrow and still has there. */
export interface PactParty extends PartySpec {
  confirmed: boolean;
  paidPot: string;
  paidBond: string;
  fundedAt: number | null;
  /** The rail receipt of the current funding, keyed per funding round. */
  receipt: string | null;
  /** How many times it withdrew; names the funding round in the collect key. */
  withdrawals: number;
}

export type EvidenceItem = { blob: string; note?: string } | { url: string } | { note: string };

export interface Share {
  party: PartyId;
  bp: number;
}

export interface Proposal {
  evidence: EvidenceItem[];
  distribution: Share[];
}

/** Who pays the arbitration fee: `objector` (proposal upheld), `proposer` (objection upheld), or `split`. */
export const FEE_FROM = ['proposer', 'objector', 'split'] as const;
export type FeeFrom = (typeof FEE_FROM)[number];

/** `POST /pacts/:id/verdict` as the evaluator signs it. */
export interface VerdictBody {
  pactId: string;
  inputHash: string;
  distribution: Share[];
  feeFrom: FeeFrom;
  reason?: string;
  issuedAt: number;
  signer: PartyId;
  sig: string;
}

/** The signed verdict as applied, kept whole so anyone can check its signature later. */
export interface Verdict extends VerdictBody {
  at: number;
}

export type PayoutKind = 'pot' | 'deposit' | 'bond' | 'fee';

export interface Payout {
  party: PartyId;
  kind: PayoutKind;
  amount: string;
  /** `<pactId>:<transition>:<kind>:<party>`, the rail's idempotency key. */
  key: string;
  transition: string;
  status: 'pending' | 'paid';
  railRef: string | null;
}

export type Outcome =
  | 'settled_by_cosign'
  | 'settled_by_silence'
  | 'settled_by_verdict'
  | 'cancelled_fund_deadline'
  | 'cancelled_perform_deadline'
  | 'cancelled_verdict_deadline'
  | 'cancelled_mutual';

export interface Settlement {
  outcome: Outcome;
  pot: { party: PartyId; amount: string }[];
  depositRefunds: { party: PartyId; amount: string }[];
  bondReturns: { party: PartyId; amount: string }[];
  bondForfeits: { party: PartyId; amount: string }[];
}

/** The whole pact: the machine's context and the record `GET /pacts/:id` returns. */
export interface Pact {
  id: string;
  state: PactState;
  stateNonce: number;
  rail: RailName;
  asset: string;
  parties: PactParty[];
  proposer: PartyId;
  terms: { spec: string } & Record<string, unknown>;
  minParties: number;
  windows: Windows;
  groupId: string | null;
  createdBy: PartyId;
  createdAt: number;
  updatedAt: number;
  fundBy: number;
  activeAt: number | null;
  performBy: number | null;
  proposedAt: number | null;
  objectBy: number | null;
  disputedAt: number | null;
  verdictBy: number | null;
  closedAt: number | null;
  proposal: Proposal | null;
  inputHash: string | null;
  cosigns: { party: PartyId; at: number }[];
  objection: { by: PartyId; reason: string; at: number } | null;
  verdict: Verdict | null;
  settlement: Settlement | null;
  payouts: Payout[];
  evaluator: EvaluatorPolicy;
  arbitrationFeeRecipient: PartyId;
  escrowAccount: string;
  sourceOffer: { id: string; by: PartyId } | null;
}
