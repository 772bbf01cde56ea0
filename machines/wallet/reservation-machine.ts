import { assign, setup } from 'xstate';
import { statusStep } from './status-step.js';
import type { Reservation, Settlement } from './types.js';

/** What can end a hold; each names the wallet transaction that records it. */
export type ReservationEvent =
  | { type: 'settle'; at: number; settlement: Settlement; transactionId: string }
  | { type: 'release'; at: number; reason: string | null; transactionId: string }
  | { type: 'expire'; at: number; transactionId: string };

type Args = { context: Reservation; event: ReservationEvent };
const sum = (amounts: string[]) => amounts.reduce((total, amount) => total + BigInt(amount), 0n);

/**
 * A reservation: held until it is settled (before `expiresAt`, for at most what it holds, its credits adding up to
 * the debit), released, or expired (at or after `expiresAt`). Every end is final: a hold ends once.
 */
export const reservationMachine = setup({
  types: { context: {} as Reservation, events: {} as ReservationEvent, input: {} as Reservation },
  guards: {
    settleable: ({ context, event }: Args) => {
      if (event.type !== 'settle') return false;
      const debit = BigInt(event.settlement.debit);
      return event.at < context.expiresAt && debit >= 0n && debit <= BigInt(context.amount) && sum(event.settlement.credits.map((c) => c.amount)) === debit;
    },
    lapsed: ({ context, event }: Args) => event.at >= context.expiresAt,
  },
  actions: {
    end: assign(({ context, event }: Args) => ({ finalizedAt: event.at, ledgerTxIds: [...context.ledgerTxIds, event.transactionId] })),
    recordSettlement: assign(({ event }: Args) => (event.type === 'settle' ? { settlement: event.settlement } : {})),
    recordReason: assign(({ event }: Args) => ({ releaseReason: event.type === 'release' ? event.reason : 'expired' })),
  },
}).createMachine({
  id: 'reservation',
  context: ({ input }) => input,
  initial: 'held',
  states: {
    held: {
      on: {
        settle: { guard: 'settleable', target: 'settled', actions: ['recordSettlement', 'end'] },
        release: { target: 'released', actions: ['recordReason', 'end'] },
        expire: { guard: 'lapsed', target: 'expired', actions: ['recordReason', 'end'] },
      },
    },
    settled: { type: 'final' },
    released: { type: 'final' },
    expired: { type: 'final' },
  },
});

/** The reservation after `event`, or undefined when the machine refuses it. */
export const nextReservation = (reservation: Reservation, event: ReservationEvent): Reservation | undefined => statusStep(reservationMachine, reservation, event);
