import type { Checkout, Execution, ProviderAuthorization, LedgerEntry, LedgerTransaction, Reservation, Settlement, Wallet } from './types.js';

/** What happened to a wallet, as its journal records it. Every event carries its own time. */
export type WalletEvent =
  | { type: 'created'; at: number; wallet: Wallet }
  | { type: 'paired'; at: number; pairingId: string; accessTokenHash: string }
  | { type: 'checkoutOpened'; at: number; checkout: Checkout }
  /** The checkout's payment arrived: the wallet is credited, with the transaction and the owner's entry. */
  /** `paidAt`: when the rail took the money (the checkout must still have been open then). */
  | { type: 'checkoutPaid'; at: number; paidAt: number; checkoutId: string; rail: string; ref: string; transaction: LedgerTransaction; entry: LedgerEntry }
  /** Available credit moves to held for a reservation. */
  | { type: 'reserved'; at: number; reservation: Reservation; transaction: LedgerTransaction; entry: LedgerEntry }
  /** A held reservation ends: its debit leaves (to other wallets, through `system:transfers`), the rest is available again. */
  | { type: 'reservationSettled'; at: number; reservationId: string; settlement: Settlement; transaction: LedgerTransaction; entries: LedgerEntry[] }
  | { type: 'reservationReleased'; at: number; reservationId: string; reason: string | null; transaction: LedgerTransaction; entry: LedgerEntry }
  /** A hold whose `expiresAt` passed, released whole by the keeper. */
  | { type: 'reservationExpired'; at: number; reservationId: string; transaction: LedgerTransaction; entry: LedgerEntry }
  /** A provider call begins: its price moves from available to held. */
  | { type: 'executionStarted'; at: number; execution: Execution; transaction: LedgerTransaction; entry: LedgerEntry }
  /** The service's payer signed an authorization for the provider: from here a payment may go. */
  | { type: 'executionPaying'; at: number; executionId: string; authorization: ProviderAuthorization }
  /** The provider answered: `charged` (at most the hold) goes to `system:provider_spend`, the rest of the hold comes back. */
  | { type: 'executionSucceeded'; at: number; executionId: string; charged: string; outputHash: string; providerPayment: Execution['providerPayment']; transaction: LedgerTransaction; entries: LedgerEntry[] }
  /** The provider took its payment and gave no usable answer: charged what it took, the rest comes back. */
  | { type: 'executionUnanswered'; at: number; executionId: string; charged: string; reason: string; providerPayment: Execution['providerPayment']; transaction: LedgerTransaction; entries: LedgerEntry[] }
  /** The provider was not paid (nothing signed, or what was signed never used): the whole hold comes back. */
  | { type: 'executionFailed'; at: number; executionId: string; reason: string; transaction: LedgerTransaction; entry: LedgerEntry }
  /** No answer after a payment may have gone: the hold stays until reconciled, which is due at `reconcileAt`. */
  | { type: 'executionAmbiguous'; at: number; executionId: string; reason: string; reconcileAt: number }
  /** Reconciled: the authorization can never be taken now, so the whole hold comes back. */
  | { type: 'executionLapsed'; at: number; executionId: string; reason: string; transaction: LedgerTransaction; entry: LedgerEntry }
  /** Another wallet's settlement credits this one, once per reservation. */
  | { type: 'credited'; at: number; reservationId: string; amount: string; transaction: LedgerTransaction; entry: LedgerEntry };
