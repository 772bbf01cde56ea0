import type { RailName } from '../machines/pact/types.js';
import type { Money } from '../protocol/money.js';
import type { PartyId } from '../protocol/party.js';

/** What a payer must pay into escrow: the body of a 402. */
export interface Requirement {
  rail: RailName;
  amount: Money;
  asset: string;
  payTo: string;
  railData: Record<string, unknown>;
}

export interface CollectRequest {
  /** Idempotency key: the same key never collects twice. */
  key: string;
  pactId: string;
  payer: PartyId;
  amount: Money;
  proof: unknown;
}

/** `release` pays the pot or a fee out; `refund` returns deposits and bonds. */
export type PayoutPurpose = 'release' | 'refund';

export interface PayoutRequest {
  /** Idempotency key `<pactId>:<transition>:<kind>:<party>`: the same key never pays twice. */
  key: string;
  pactId: string;
  payee: PartyId;
  amount: Money;
  purpose: PayoutPurpose;
}

export interface RailReceipt {
  key: string;
  ref: string;
}

export type RailErrorCode = 'invalid_proof' | 'insufficient_funds' | 'rail_failure';

export class RailError extends Error {
  constructor(
    readonly code: RailErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface Collected extends RailReceipt {
  payer: PartyId;
  amount: Money;
}

export interface RailHealth {
  live: boolean;
  solvency: { ok: boolean };
}

/** One payment network behind escrow. `mock` now; `x402` and `mpp` implement the same. */
export interface Rail {
  readonly name: RailName;
  /** Where the pact's escrow lives on this rail (`payTo`). */
  readonly escrowAccount: string;
  /** Whether `address` can receive payouts on this rail (what `POST /rails/:rail/address` binds). */
  isAddress(address: string): boolean;
  /** What `payer` must pay into escrow for `amount`: the body of the fund call's 402. */
  quote(payer: PartyId, amount: Money): Requirement;
  collect(request: CollectRequest): Promise<RailReceipt>;
  payout(request: PayoutRequest): Promise<RailReceipt>;
  /** Every collect made, for the reconciler that reverses collects no pact recorded. */
  collects(): AsyncIterable<Collected>;
  health(): Promise<RailHealth>;
}
