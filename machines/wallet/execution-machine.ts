import { assign, setup, transition } from 'xstate';
import type { Execution } from './types.js';

/** What ends (or suspends) a provider call; each names the wallet transaction that records it, if money moved. */
export type ExecutionEvent =
  | { type: 'succeed'; at: number; charged: string; outputHash: string; providerPayment: Execution['providerPayment']; transactionId: string }
  | { type: 'fail'; at: number; reason: string; transactionId: string }
  | { type: 'lose'; at: number; reason: string };

type Args = { context: Execution; event: ExecutionEvent };

/**
 * A provider call: pending until the provider answers (succeeded: charged at most what was held), fails before any
 * payment (failed: nothing charged), or is lost after a payment may have gone (ambiguous), which only reconciliation
 * ends, as succeeded or failed. Never retried blindly.
 */
export const executionMachine = setup({
  types: { context: {} as Execution, events: {} as ExecutionEvent, input: {} as Execution },
  guards: {
    withinHold: ({ context, event }: Args) => event.type === 'succeed' && BigInt(event.charged) >= 0n && BigInt(event.charged) <= BigInt(context.reserved),
  },
  actions: {
    charge: assign(({ context, event }: Args) =>
      event.type === 'succeed'
        ? { charged: event.charged, released: (BigInt(context.reserved) - BigInt(event.charged)).toString(), outputHash: event.outputHash, providerPayment: event.providerPayment, error: null, finishedAt: event.at, ledgerTxIds: [...context.ledgerTxIds, event.transactionId] }
        : {},
    ),
    giveBack: assign(({ context, event }: Args) =>
      event.type === 'fail' ? { charged: '0', released: context.reserved, error: event.reason, finishedAt: event.at, ledgerTxIds: [...context.ledgerTxIds, event.transactionId] } : {},
    ),
    noteLoss: assign(({ event }: Args) => (event.type === 'lose' ? { error: event.reason } : {})),
  },
}).createMachine({
  id: 'execution',
  context: ({ input }) => input,
  initial: 'pending',
  states: {
    pending: {
      on: {
        succeed: { guard: 'withinHold', target: 'succeeded', actions: 'charge' },
        fail: { target: 'failed', actions: 'giveBack' },
        lose: { target: 'ambiguous', actions: 'noteLoss' },
      },
    },
    ambiguous: {
      on: {
        succeed: { guard: 'withinHold', target: 'succeeded', actions: 'charge' },
        fail: { target: 'failed', actions: 'giveBack' },
      },
    },
    succeeded: { type: 'final' },
    failed: { type: 'final' },
  },
});

/** The execution after `event`, or undefined when the machine refuses it. */
export function nextExecution(execution: Execution, event: ExecutionEvent): Execution | undefined {
  const [next] = transition(executionMachine, executionMachine.resolveState({ value: execution.status, context: execution }), event);
  return next.value === execution.status ? undefined : { ...next.context, status: next.value as Execution['status'] };
}
