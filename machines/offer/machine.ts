import { assign, setup } from 'xstate';
import type { Offer, OfferEvent } from './types.js';

/**
 * The offer lifecycle. An offer is published OPEN; each acceptance takes one unit of its inventory, and the
 * acceptance of the last unit leaves it SOLD_OUT; a unit given back (its pact cancelled unfunded) opens it
 * again. Whether an acceptance or a release may happen at all is `rules.ts`'s to say. Pure: the event carries its time; expiry is checked by
 * `acceptanceRefusal` (rules.ts) against the command's time, since nothing happens to an offer when it expires.
 */
export const offerMachine = setup({
  types: { context: {} as Offer, events: {} as OfferEvent, input: {} as Offer },
  guards: {
    lastUnit: ({ context }) => context.remaining === 1,
    /** A unit can come back only if one was taken. */
    unitTaken: ({ context }) => context.remaining < (context.inventory ?? 1),
  },
  actions: {
    takeUnit: assign(({ context }) => ({ remaining: context.remaining - 1 })),
    giveBack: assign(({ context }) => ({ remaining: context.remaining + 1, released: context.released + 1 })),
  },
}).createMachine({
  id: 'offer',
  context: ({ input }) => input,
  initial: 'OPEN',
  states: {
    OPEN: {
      on: {
        accepted: [
          { guard: 'lastUnit', target: 'SOLD_OUT', actions: 'takeUnit' },
          { actions: 'takeUnit' },
        ],
        released: { guard: 'unitTaken', actions: 'giveBack' },
      },
    },
    SOLD_OUT: {
      on: { released: { guard: 'unitTaken', target: 'OPEN', actions: 'giveBack' } },
    },
  },
});
