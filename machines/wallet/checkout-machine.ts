import { assign, setup } from 'xstate';
import { statusStep } from './status-step.js';
import type { Checkout } from './types.js';

/** A checkout's payment: when the rail took it (`paidAt`), when it was recorded (`at`), and the rail's reference. */
export type CheckoutEvent = { type: 'pay'; at: number; paidAt: number; rail: string; ref: string };

/**
 * A hosted checkout: open until paid, once, with money the rail took before `expiresAt` (an open checkout past it
 * reads `expired`, which is never stored: it is the same open one, which can no longer be paid).
 */
export const checkoutMachine = setup({
  types: { context: {} as Checkout, events: {} as CheckoutEvent, input: {} as Checkout },
  guards: {
    paidInTime: ({ context, event }) => event.paidAt < context.expiresAt && event.paidAt <= event.at,
  },
  actions: {
    complete: assign(({ event }) => ({ completedAt: event.at, paidWith: { rail: event.rail, ref: event.ref } })),
  },
}).createMachine({
  id: 'checkout',
  context: ({ input }) => input,
  initial: 'open',
  states: {
    open: { on: { pay: { guard: 'paidInTime', target: 'completed', actions: 'complete' } } },
    completed: { type: 'final' },
  },
});

/** The checkout after `event`, or undefined when the machine refuses it. */
export const nextCheckout = (checkout: Checkout, event: CheckoutEvent): Checkout | undefined => statusStep(checkoutMachine, checkout, event);
