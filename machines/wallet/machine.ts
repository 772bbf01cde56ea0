import { assign, setup } from 'xstate';
import type { WalletEvent } from './events.js';
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
export const balanced = (legs: { amount: string }[]) => legs.reduce((sum, leg) => sum + BigInt(leg.amount), 0n) === 0n;

/** The checkout is this wallet's, open, unexpired at the event's time, and the credit is the checkout's amount, balanced. */
const checkoutPayable = when('checkoutPaid', (wallet, event) => {
  const checkout = wallet.checkouts[event.checkoutId];
  return checkout !== undefined && checkout.status === 'open' && event.at < checkout.expiresAt && event.entry.amount === checkout.amount && balanced(event.transaction.legs);
});

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
    stamp: assign(({ context, event }) => ({ updatedAt: event.at, version: context.version + 1 })),
  },
}).createMachine({
  id: 'wallet',
  context: ({ input }) => input,
  initial: 'pending_pairing',
  states: {
    pending_pairing: { on: { paired: { guard: 'pairingOpen', target: 'active', actions: ['pair', 'stamp'] } } },
    active: {
      on: {
        checkoutOpened: { guard: 'checkoutNew', actions: ['openCheckout', 'stamp'] },
        checkoutPaid: { guard: 'checkoutPayable', actions: ['creditCheckout', 'stamp'] },
      },
    },
    // A payment that arrives while the wallet is suspended is still its owner's money.
    suspended: { on: { checkoutPaid: { guard: 'checkoutPayable', actions: ['creditCheckout', 'stamp'] } } },
    closed: {},
  },
});
