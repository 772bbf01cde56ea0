import type { AnyStateMachine } from 'xstate';
import { offerMachine } from '../machines/offer/machine.js';
import { pactMachine } from '../machines/pact/machine.js';
import { checkoutMachine } from '../machines/wallet/checkout-machine.js';
import { executionMachine } from '../machines/wallet/execution-machine.js';
import { walletMachine } from '../machines/wallet/machine.js';
import { reservationMachine } from '../machines/wallet/reservation-machine.js';

/** A machine to draw: its file name in docs/machines/, the file that defines it, one line on what it is. */
export interface MachineEntry {
  readonly name: string;
  readonly source: string;
  readonly summary: string;
  readonly machine: AnyStateMachine;
}

/** Every XState machine of the project (a test fails when a file with `createMachine(` is missing here). */
export const MACHINES: readonly MachineEntry[] = [
  {
    name: 'pact',
    source: 'machines/pact/machine.ts',
    summary: 'The pact lifecycle: funding, proposal, cosign or objection, verdict, deadlines, payouts.',
    machine: pactMachine,
  },
  {
    name: 'offer',
    source: 'machines/offer/machine.ts',
    summary: "An offer's inventory: each acceptance takes a unit, a unit given back opens it again.",
    machine: offerMachine,
  },
  {
    name: 'wallet',
    source: 'machines/wallet/machine.ts',
    summary: 'A credit wallet: paired once, checkouts credited, reservations held, settled, released or expired, credits received.',
    machine: walletMachine,
  },
  {
    name: 'reservation',
    source: 'machines/wallet/reservation-machine.ts',
    summary: 'A hold on a wallet: settled in time for at most what it holds, released, or expired; each end final.',
    machine: reservationMachine,
  },
  {
    name: 'checkout',
    source: 'machines/wallet/checkout-machine.ts',
    summary: 'A hosted checkout: paid once, with money the rail took before it expired.',
    machine: checkoutMachine,
  },
  {
    name: 'execution',
    source: 'machines/wallet/execution-machine.ts',
    summary: 'A paid provider call: charged on an answer, released on a failure, held when it is lost after a payment.',
    machine: executionMachine,
  },
];
