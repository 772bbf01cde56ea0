import { assign, setup } from 'xstate';
import type { WalletEvent } from './events.js';
import type { Wallet } from './types.js';

type Of<T extends WalletEvent['type']> = Extract<WalletEvent, { type: T }>;
type Args = { context: Wallet; event: WalletEvent };

/** The pairing in `paired` is this wallet's, unclaimed, and still open at the event's time. */
const pairingOpen = ({ context, event }: Args) => {
  const { pairingId, at } = event as Of<'paired'>;
  return event.type === 'paired' && context.pairing.id === pairingId && context.pairing.claimedAt === null && at < context.pairing.expiresAt;
};

/**
 * The wallet lifecycle. Pure: no clock, no I/O; every event carries its own `at`. The context is the whole
 * wallet; balances move with the ledger events of later work (checkout, reservations, executions).
 */
export const walletMachine = setup({
  types: { context: {} as Wallet, events: {} as WalletEvent, input: {} as Wallet },
  guards: { pairingOpen },
  actions: {
    pair: assign(({ context, event }) => {
      const { at, accessTokenHash } = event as Of<'paired'>;
      return { status: 'active' as const, accessTokenHash, pairing: { ...context.pairing, claimedAt: at } };
    }),
    stamp: assign(({ context, event }) => ({ updatedAt: event.at, version: context.version + 1 })),
  },
}).createMachine({
  id: 'wallet',
  context: ({ input }) => input,
  initial: 'pending_pairing',
  states: {
    pending_pairing: { on: { paired: { guard: 'pairingOpen', target: 'active', actions: ['pair', 'stamp'] } } },
    active: {},
    suspended: {},
    closed: {},
  },
});
