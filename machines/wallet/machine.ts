import { assign, setup } from 'xstate';
import type { WalletEvent } from './events.js';
import { nextCheckout } from './checkout-machine.js';
import { nextExecution, type ExecutionEvent } from './execution-machine.js';
import { nextReservation, type ReservationEvent } from './reservation-machine.js';
import type { Wallet } from './types.js';

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

/** The checkout after its payment, when its machine takes it. */
const paidCheckout = (wallet: Wallet, { at, paidAt, checkoutId, rail, ref }: Of<'checkoutPaid'>) => {
  const checkout = wallet.checkouts[checkoutId];
  return checkout && nextCheckout(checkout, { type: 'pay', at, paidAt, rail, ref });
};

/** The checkout is this wallet's and its machine takes the payment; the credit is its amount, from funding. */
const checkoutPayable = when('checkoutPaid', (wallet, event) => {
  const checkout = wallet.checkouts[event.checkoutId];
  return paidCheckout(wallet, event) !== undefined && event.entry.amount === checkout!.amount && isTopup(wallet, event.transaction.legs, checkout!.amount);
});

type HoldEnd = Of<'reservationSettled'> | Of<'reservationReleased'> | Of<'reservationExpired'>;

/** What ends a hold, as its reservation's machine reads it. */
function reservationEventOf(event: HoldEnd): ReservationEvent {
  const common = { at: event.at, transactionId: event.transaction.id };
  if (event.type === 'reservationSettled') return { type: 'settle', settlement: event.settlement, ...common };
  if (event.type === 'reservationReleased') return { type: 'release', reason: event.reason, ...common };
  return { type: 'expire', ...common };
}

/** The reservation after the event that ends it, when its machine takes it. */
const endedReservation = (wallet: Wallet, event: HoldEnd) => {
  const reservation = wallet.reservations[event.reservationId];
  return reservation && nextReservation(reservation, reservationEventOf(event));
};

/** A hold's end its reservation's machine takes, recorded by a balanced transaction. */
const holdEnds = <T extends HoldEnd['type']>(type: T) => when(type, (wallet, event) => endedReservation(wallet, event as HoldEnd) !== undefined && balanced((event as HoldEnd).transaction.legs));

/** The wallet after a hold ended: its reservation ended, nothing held for it; a settlement's debit leaves the balance. */
function afterHold(wallet: Wallet, event: HoldEnd): Partial<Wallet> {
  const ended = endedReservation(wallet, event)!;
  const debit = event.type === 'reservationSettled' ? BigInt(event.settlement.debit) : 0n;
  return {
    balance: (BigInt(wallet.balance) - debit).toString(),
    held: (BigInt(wallet.held) - BigInt(ended.amount)).toString(),
    reservations: { ...wallet.reservations, [ended.id]: ended },
  };
}

type ExecutionStep = Of<'executionPaying'> | Of<'executionSucceeded'> | Of<'executionUnanswered'> | Of<'executionFailed'> | Of<'executionAmbiguous'> | Of<'executionLapsed'>;
const executionSteps: ReadonlySet<string> = new Set<ExecutionStep['type']>(['executionPaying', 'executionSucceeded', 'executionUnanswered', 'executionFailed', 'executionAmbiguous', 'executionLapsed']);
const isExecutionStep = (event: WalletEvent): event is ExecutionStep => executionSteps.has(event.type);

/** An execution's step, as its machine reads it. */
function executionEventOf(event: ExecutionStep): ExecutionEvent {
  switch (event.type) {
    case 'executionPaying':
      return { type: 'pay', authorization: event.authorization };
    case 'executionSucceeded':
      return { type: 'succeed', at: event.at, charged: event.charged, outputHash: event.outputHash, providerPayment: event.providerPayment, transactionId: event.transaction.id };
    case 'executionUnanswered':
      return { type: 'chargeUnanswered', at: event.at, charged: event.charged, reason: event.reason, providerPayment: event.providerPayment, transactionId: event.transaction.id };
    case 'executionFailed':
      return { type: 'fail', at: event.at, reason: event.reason, transactionId: event.transaction.id };
    case 'executionAmbiguous':
      return { type: 'lose', at: event.at, reason: event.reason };
    case 'executionLapsed':
      return { type: 'lapse', at: event.at, reason: event.reason, transactionId: event.transaction.id };
  }
}

/** The execution after its step, when its machine takes it. */
const steppedExecution = (wallet: Wallet, event: ExecutionStep) => {
  const execution = wallet.executions?.[event.executionId];
  return execution && nextExecution(execution, executionEventOf(event));
};

/** Whether a step ends the execution with money moved (its hold charged or given back). */
const movesMoney = (event: ExecutionStep): event is Of<'executionSucceeded'> | Of<'executionUnanswered'> | Of<'executionFailed'> | Of<'executionLapsed'> =>
  event.type !== 'executionPaying' && event.type !== 'executionAmbiguous';

/** An execution's step its machine takes; money moves only with a balanced transaction. */
const executionSteppable = ({ context, event }: Args) =>
  isExecutionStep(event) && steppedExecution(context, event) !== undefined && (!movesMoney(event) || balanced(event.transaction.legs));

/** The wallet after an execution's step: an end charges what was charged and frees its hold; the rest only record. */
function afterExecution(wallet: Wallet, event: ExecutionStep): Partial<Wallet> {
  const stepped = steppedExecution(wallet, event)!;
  const executions = { ...wallet.executions, [stepped.id]: stepped };
  if (!movesMoney(event)) return { executions };
  return {
    balance: (BigInt(wallet.balance) - BigInt(stepped.charged)).toString(),
    held: (BigInt(wallet.held) - BigInt(stepped.reserved)).toString(),
    executions,
  };
}

/** A new execution, pending, whose hold the available credit covers, with a balanced transaction. */
const startable = when('executionStarted', (wallet, { execution, transaction }) =>
  wallet.executions?.[execution.id] === undefined && execution.status === 'pending' && execution.authorization === null && BigInt(execution.reserved) >= 0n && BigInt(execution.reserved) <= available(wallet) && balanced(transaction.legs),
);

const available = (wallet: Wallet) => BigInt(wallet.balance) - BigInt(wallet.held);

/** A new reservation the available credit covers, with a balanced transaction. */
const reservable = when('reserved', (wallet, { reservation, transaction }) =>
  wallet.reservations[reservation.id] === undefined && reservation.status === 'held' && Number.isSafeInteger(reservation.expiresAt) && BigInt(reservation.amount) > 0n && BigInt(reservation.amount) <= available(wallet) && balanced(transaction.legs),
);

const takeStep = { guard: 'executionSteppable', actions: ['stepExecution', 'stamp'] } as const;
/** An execution under way goes on in an active wallet and in a suspended one alike. */
const executionStepsTaken = {
  executionPaying: takeStep,
  executionSucceeded: takeStep,
  executionUnanswered: takeStep,
  executionFailed: takeStep,
  executionAmbiguous: takeStep,
  executionLapsed: takeStep,
};

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
    settleable: holdEnds('reservationSettled'),
    releasable: holdEnds('reservationReleased'),
    lapsed: holdEnds('reservationExpired'),
    startable,
    executionSteppable,
    newCredit: when('credited', (wallet, { reservationId, amount, transaction }) => wallet.creditsReceived[reservationId] === undefined && BigInt(amount) > 0n && balanced(transaction.legs)),
  },
  actions: {
    pair: assign(update('paired', (wallet, { at, accessTokenHash }) => ({ accessTokenHash, pairing: { ...wallet.pairing, claimedAt: at } }))),
    openCheckout: assign(update('checkoutOpened', (wallet, { checkout }) => ({ checkouts: { ...wallet.checkouts, [checkout.id]: checkout } }))),
    creditCheckout: assign(
      update('checkoutPaid', (wallet, event) => {
        const paid = paidCheckout(wallet, event)!;
        return { balance: (BigInt(wallet.balance) + BigInt(paid.amount)).toString(), checkouts: { ...wallet.checkouts, [paid.id]: paid } };
      }),
    ),
    hold: assign(
      update('reserved', (wallet, { reservation, transaction }) => ({
        held: (BigInt(wallet.held) + BigInt(reservation.amount)).toString(),
        reservations: { ...wallet.reservations, [reservation.id]: { ...reservation, ledgerTxIds: [transaction.id] } },
      })),
    ),
    settle: assign(update('reservationSettled', afterHold)),
    release: assign(update('reservationReleased', afterHold)),
    expire: assign(update('reservationExpired', afterHold)),
    startExecution: assign(
      update('executionStarted', (wallet, { execution, transaction }) => ({
        held: (BigInt(wallet.held) + BigInt(execution.reserved)).toString(),
        executions: { ...wallet.executions, [execution.id]: { ...execution, ledgerTxIds: [transaction.id] } },
      })),
    ),
    stepExecution: assign(({ context, event }: Args) => (isExecutionStep(event) ? afterExecution(context, event) : {})),
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
        executionStarted: { guard: 'startable', actions: ['startExecution', 'stamp'] },
        ...executionStepsTaken,
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
        ...executionStepsTaken,
        credited: { guard: 'newCredit', actions: ['credit', 'stamp'] },
      },
    },
    closed: {},
  },
});
