import { assign, setup } from 'xstate';
import type { WalletEvent } from './events.js';
import type { Reservation, Wallet } from './types.js';

type Of<T extends WalletEvent['type']> = Extract<WalletEvent, { type: T }>;
type Args = { context: Wallet; event: WalletEvent };

/** A guard that holds only for events of `type`, narrowed for `check`. */
const when =
  <T extends WalletEvent['type']>(type: T, check: (wallet: Wallet, event: Of<T>) => boolean) =>
  ({ context, event }: Args) =>
    event.type === type && check(context, event as Of<T>);

/** A context update for events of `type`. */
const update =
  <T extends WalletEvent['type']>(type: T, change: (wallet: Wallet, event: Of<T>) => Partial<Wallet>) =>
  ({ context, event }: Args): Partial<Wallet> =>
    event.type === type ? change(context, event as Of<T>) : {};

/** Whether a transaction's legs sum to zero (double entry). */
export const balanced = (legs: { amount: string }[]) => legs.length >= 2 && legs.reduce((sum, leg) => sum + BigInt(leg.amount), 0n) === 0n;

/** The legs of a top-up: exactly the amount from `system:funding` to this wallet's available credit. */
const isTopup = (wallet: Wallet, legs: { account: string; amount: string }[], amount: string) =>
  legs.length === 2 &&
  legs[0]!.account === 'system:funding' && legs[0]!.amount === `-${amount}` &&
  legs[1]!.account === `wallet:${wallet.id}:available` && legs[1]!.amount === amount;

/** The checkout is this wallet's, open, was paid before it expired, and the credit is its amount, from funding. */
const checkoutPayable = when('checkoutPaid', (wallet, event) => {
  const checkout = wallet.checkouts[event.checkoutId];
  return checkout !== undefined && checkout.status === 'open' && event.paidAt < checkout.expiresAt && event.paidAt <= event.at && event.entry.amount === checkout.amount && isTopup(wallet, event.transaction.legs, checkout.amount);
});

const available = (wallet: Wallet) => BigInt(wallet.balance) - BigInt(wallet.held);
const held = (wallet: Wallet, id: string) => wallet.reservations[id]?.status === 'held';
const sum = (amounts: string[]) => amounts.reduce((total, amount) => total + BigInt(amount), 0n);

/** A new reservation the available credit covers, with a balanced transaction. */
const reservable = when('reserved', (wallet, { reservation, transaction }) =>
  wallet.reservations[reservation.id] === undefined && reservation.status === 'held' && BigInt(reservation.amount) > 0n && BigInt(reservation.amount) <= available(wallet) && balanced(transaction.legs),
);

/** A held reservation settled for at most what it holds, its credits adding up to the debit, balanced. */
const settleable = when('reservationSettled', (wallet, { reservationId, settlement, transaction }) => {
  const reservation = wallet.reservations[reservationId];
  const debit = BigInt(settlement.debit);
  return held(wallet, reservationId) && debit >= 0n && debit <= BigInt(reservation!.amount) && sum(settlement.credits.map((c) => c.amount)) === debit && balanced(transaction.legs);
});

/** A held reservation given back whole (released or expired): the wallet's held goes down by its amount. */
function unheld(wallet: Wallet, reservationId: string, end: Pick<Reservation, 'status' | 'releaseReason' | 'finalizedAt'>, transactionId: string): Partial<Wallet> {
  const reservation = wallet.reservations[reservationId]!;
  const done = { ...reservation, ...end, ledgerTxIds: [...reservation.ledgerTxIds, transactionId] };
  return { held: (BigInt(wallet.held) - BigInt(reservation.amount)).toString(), reservations: { ...wallet.reservations, [reservationId]: done } };
}

/**
 * The wallet lifecycle and its balances. Pure: no clock, no I/O; every event carries its own `at`, and
 * what it credits or debits is a balanced transaction the guards check.
 */
export const walletMachine = setup({
  types: { context: {} as Wallet, events: {} as WalletEvent, input: {} as Wallet },
  guards: {
    pairingOpen: when('paired', (wallet, event) => wallet.pairing.id === event.pairingId && wallet.pairing.claimedAt === null && event.at < wallet.pairing.expiresAt),
    checkoutNew: when('checkoutOpened', (wallet, event) => wallet.checkouts[event.checkout.id] === undefined && event.checkout.status === 'open'),
    checkoutPayable,
    reservable,
    settleable,
    releasable: when('reservationReleased', (wallet, { reservationId, transaction }) => held(wallet, reservationId) && balanced(transaction.legs)),
    lapsed: when('reservationExpired', (wallet, { at, reservationId, transaction }) => held(wallet, reservationId) && at >= wallet.reservations[reservationId]!.expiresAt && balanced(transaction.legs)),
    newCredit: when('credited', (wallet, { reservationId, amount, transaction }) => wallet.creditsReceived[reservationId] === undefined && BigInt(amount) > 0n && balanced(transaction.legs)),
  },
  actions: {
    pair: assign(update('paired', (wallet, { at, accessTokenHash }) => ({ accessTokenHash, pairing: { ...wallet.pairing, claimedAt: at } }))),
    openCheckout: assign(update('checkoutOpened', (wallet, { checkout }) => ({ checkouts: { ...wallet.checkouts, [checkout.id]: checkout } }))),
    creditCheckout: assign(
      update('checkoutPaid', (wallet, { at, checkoutId, rail, ref }) => {
        const checkout = wallet.checkouts[checkoutId]!;
        const paid = { ...checkout, status: 'completed' as const, completedAt: at, paidWith: { rail, ref } };
        return { balance: (BigInt(wallet.balance) + BigInt(checkout.amount)).toString(), checkouts: { ...wallet.checkouts, [checkoutId]: paid } };
      }),
    ),
    hold: assign(
      update('reserved', (wallet, { reservation, transaction }) => ({
        held: (BigInt(wallet.held) + BigInt(reservation.amount)).toString(),
        reservations: { ...wallet.reservations, [reservation.id]: { ...reservation, ledgerTxIds: [transaction.id] } },
      })),
    ),
    settle: assign(
      update('reservationSettled', (wallet, { at, reservationId, settlement, transaction }) => {
        const reservation = wallet.reservations[reservationId]!;
        const done = { ...reservation, status: 'settled' as const, settlement, finalizedAt: at, ledgerTxIds: [...reservation.ledgerTxIds, transaction.id] };
        return {
          balance: (BigInt(wallet.balance) - BigInt(settlement.debit)).toString(),
          held: (BigInt(wallet.held) - BigInt(reservation.amount)).toString(),
          reservations: { ...wallet.reservations, [reservationId]: done },
        };
      }),
    ),
    release: assign(
      update('reservationReleased', (wallet, { at, reservationId, reason, transaction }) => unheld(wallet, reservationId, { status: 'released', releaseReason: reason, finalizedAt: at }, transaction.id)),
    ),
    expire: assign(
      update('reservationExpired', (wallet, { at, reservationId, transaction }) => unheld(wallet, reservationId, { status: 'expired', releaseReason: 'expired', finalizedAt: at }, transaction.id)),
    ),
    credit: assign(
      update('credited', (wallet, { reservationId, amount, transaction }) => ({
        balance: (BigInt(wallet.balance) + BigInt(amount)).toString(),
        creditsReceived: { ...wallet.creditsReceived, [reservationId]: transaction.id },
      })),
    ),
    stamp: assign(({ context, event }) => ({ updatedAt: event.at, version: context.version + 1 })),
  },
}).createMachine({
  id: 'wallet',
  context: ({ input }) => input,
  initial: 'pending_pairing',
  states: {
    pending_pairing: {
      on: {
        paired: { guard: 'pairingOpen', target: 'active', actions: ['pair', 'stamp'] },
        credited: { guard: 'newCredit', actions: ['credit', 'stamp'] },
      },
    },
    active: {
      on: {
        checkoutOpened: { guard: 'checkoutNew', actions: ['openCheckout', 'stamp'] },
        checkoutPaid: { guard: 'checkoutPayable', actions: ['creditCheckout', 'stamp'] },
        reserved: { guard: 'reservable', actions: ['hold', 'stamp'] },
        reservationSettled: { guard: 'settleable', actions: ['settle', 'stamp'] },
        reservationReleased: { guard: 'releasable', actions: ['release', 'stamp'] },
        reservationExpired: { guard: 'lapsed', actions: ['expire', 'stamp'] },
        credited: { guard: 'newCredit', actions: ['credit', 'stamp'] },
      },
    },
    // A suspended wallet spends nothing new, but what it holds still settles or comes back, and what it is owed arrives.
    suspended: {
      on: {
        checkoutPaid: { guard: 'checkoutPayable', actions: ['creditCheckout', 'stamp'] },
        reservationSettled: { guard: 'settleable', actions: ['settle', 'stamp'] },
        reservationReleased: { guard: 'releasable', actions: ['release', 'stamp'] },
        reservationExpired: { guard: 'lapsed', actions: ['expire', 'stamp'] },
        credited: { guard: 'newCredit', actions: ['credit', 'stamp'] },
      },
    },
    closed: {},
  },
});
