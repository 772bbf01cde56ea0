import type { SnapshotFrom } from 'xstate';
import { nextSnapshot } from '../next-snapshot.js';
import type { PactEvent } from './events.js';
import { pactMachine } from './machine.js';
import type { Pact } from './types.js';

export type PactSnapshot = SnapshotFrom<typeof pactMachine>;

/** The machine snapshot of a stored pact (its context is the whole record, state included). */
export function snapshotOf(pact: Pact): PactSnapshot {
  return pactMachine.resolveState({ value: pact.state, context: pact });
}

/** The pact after `event`, or undefined when the machine refuses it. */
export function evolve(pact: Pact, event: PactEvent): Pact | undefined {
  const next = nextSnapshot(pactMachine, snapshotOf(pact), event);
  return next.context.stateNonce === pact.stateNonce ? undefined : next.context;
}
