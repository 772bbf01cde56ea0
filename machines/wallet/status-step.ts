import type { AnyStateMachine, EventObject } from 'xstate';
import { nextSnapshot } from '../next-snapshot.js';

/**
 * A record whose `status` is the state of its machine, after `event`; undefined when the machine refuses it (no
 * move). The wallet's checkouts, reservations and executions are each such a record; their own `next…` functions
 * give the event its type.
 */
export function statusStep<T extends { status: string }>(machine: AnyStateMachine, record: T, event: EventObject): T | undefined {
  const next = nextSnapshot(machine, machine.resolveState({ value: record.status, context: record }), event);
  return next.value === record.status ? undefined : ({ ...next.context, status: next.value } as T);
}
