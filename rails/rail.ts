import type { RailName } from '../machines/pact/types.js';
import type { Money } from '../protocol/money.js';
import type { PartyId } from '../protocol/party.js';
import type { SignedCall } from '../protocol/signed-call.js';

/** What a payer must pay into escrow: the body of a 402. */
export interface Requirement {
  rail: RailName;
  amount: Money;
  asset: string;
  payTo: string;
  railData: Record<string, unknown>;
}

/** The fund call, signed by the payer: `call.railAddress` names its address on rails that ask for one. */
export type FundCall = SignedCall<{ railAddress?: string }>;

export interface QuoteRequest {
  /** The collect key this funding will be paid under (`collectKey`). */
  key: string;
  pactId: string;
  payer: PartyId;
  amount: Money;
  /** The signed fund call (absent where no pact is funded: a checkout, or the actors' unit tests). */
  call?: FundCall;
  /** The payer's address on the rail when no signed call names it (a checkout paid on mpp). */
  railAddress?: string;
}

/** A 402's body, and the headers it goes with (mpp's `WWW-Authenticate: Payment`). */
export interface Quote {
  requirement: Requirement;
  headers?: Record<string, string>;
}

export interface CollectRequest {
  /** Idempotency key: the same key never collects twice. */
  key: string;
  pactId: string;
  payer: PartyId;
  amount: Money;
  /** The parsed `X-PAYMENT`, or the `Authorization: Payment …` credential as sent. */
  proof: unknown;
  /** The fund call that brought the proof (absent for a checkout's collect, and those the mock's test hook makes). */
  call?: FundCall;
  /** The payer's address on the rail when no signed call names it (a checkout paid on mpp). */
  railAddress?: string;
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
  /** A reversal names the collect it pays back (its `ref`): the money goes back where it came from. */
  reverses?: string;
}

export interface RailReceipt {
  key: string;
  ref: string;
  /** Headers the paid fund call answers with (x402's `X-PAYMENT-RESPONSE`, mpp's `Payment-Receipt`). */
  headers?: Record<string, string>;
}

/**
 * Why a rail refused. `rail_failure` is the rail's own trouble (the outcome may be unknown: retry with the same
 * proof); `no_address` holds a payout until its payee binds an address; the rest are the payer's proof.
 */
export type RailErrorCode =
  | 'invalid_proof'
  | 'insufficient_funds'
  | 'wrong_amount'
  | 'wrong_recipient'
  | 'wrong_network'
  | 'expired'
  | 'proof_already_used'
  | 'wrong_payer'
  | 'payment_reverted'
  | 'no_address'
  | 'rail_failure';

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

/** What a rail can tell of a place among its collects: the collect made there, none (for good), or not yet. */
export type CollectPlace = Collected | 'none' | 'undetermined';

export interface CollectAt {
  position: number;
  place: CollectPlace;
}

export interface RailHealth {
  live: boolean;
  /** `ok` when escrow holds at least what it owes. */
  solvency: { ok: boolean; [detail: string]: unknown };
  /** Whether payouts can be made now (on a chain: the escrow holds gas). */
  payoutsReady: boolean;
  [detail: string]: unknown;
}

/** A rail takes new pacts and funds when it is live, solvent and can pay out. */
export const railReady = (health: RailHealth): boolean => health.live && health.solvency.ok && health.payoutsReady;

/** One payment network behind escrow: `mock`, `x402`, `mpp` and `credit` (wallet credit) implement it. */
export interface Rail {
  readonly name: RailName;
  /** Where the pact's escrow lives on this rail (`payTo`). */
  readonly escrowAccount: string;
  /** Whether `address` can receive payouts on this rail (what `POST /rails/:rail/address` binds). */
  isAddress(address: string): boolean;
  /** Whether pacts in `asset` can live on this rail. */
  holds(asset: string): boolean;
  /** The one asset this rail moves (a chain's token, the credit rail's USD); undefined when it moves any (the mock). */
  readonly asset: string | undefined;
  /** The last health judged ready (`railReady`): a rail that is not refuses new pacts and funds. */
  readonly ready: boolean;
  /** Whether the fund call must name the payer's address on this rail (`call.railAddress`, mpp). */
  readonly needsRailAddress: boolean;
  /** What the payer must pay into escrow: the fund call's 402 (the credit rail reads the payer's bound wallet). */
  quote(request: QuoteRequest): Quote | Promise<Quote>;
  collect(request: CollectRequest): Promise<RailReceipt>;
  /** The collect made under `key`, if one was (a checkout left uncredited by a crash finds its money here). */
  collected(key: string): Promise<RailReceipt | undefined>;
  payout(request: PayoutRequest): Promise<RailReceipt>;
  /**
   * The places of the rail's collects from position `from` on, in order, for the reconciler that reverses the
   * collects no pact recorded. Positions increase and keep their meaning for the life of the process; a key's
   * collect is reported at one place at most; a place left out, or once `none`, never becomes a collect. Reading
   * may settle what a crash left open (the credit rail asks the wallet again for a hold whose answer was lost).
   */
  collects(from: number): AsyncIterable<CollectAt>;
  /** What the place at `position`, one `collects` reported, is now. */
  collectAt(position: number): Promise<CollectPlace>;
  health(): Promise<RailHealth>;
}
