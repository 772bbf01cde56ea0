import { assign, setup } from 'xstate';
import { statusStep } from './status-step.js';
import type { Execution, ProviderAuthorization } from './types.js';

/** What moves a provider call on; each end names the wallet transaction that records it, if money moved. */
export type ExecutionEvent =
  | { type: 'pay'; authorization: ProviderAuthorization }
  | { type: 'succeed'; at: number; charged: string; outputHash: string; providerPayment: Execution['providerPayment']; transactionId: string }
  | { type: 'chargeUnanswered'; at: number; charged: string; reason: string; providerPayment: Execution['providerPayment']; transactionId: string }
  | { type: 'fail'; at: number; reason: string; transactionId: string }
  | { type: 'lose'; at: number; reason: string }
  | { type: 'lapse'; at: number; reason: string; transactionId: string };

type Args = { context: Execution; event: ExecutionEvent };

const chargedOf = (event: ExecutionEvent) => (event.type === 'succeed' || event.type === 'chargeUnanswered' ? BigInt(event.charged) : -1n);

/**
 * A provider call: pending until the provider answers (succeeded: charged at most what was held) or fails unpaid
 * (failed: nothing charged). A paid provider is `paying` once the service's payer signed its authorization: from
 * there the hold comes back only when the chain shows the authorization can never be taken (`lapse`, from
 * `ambiguous`); an answer is charged what was signed, an end without one is `ambiguous` (held while the
 * authorization is usable) or `unanswered` (the provider took the payment: charged it). Never retried blindly.
 */
export const executionMachine = setup({
  types: { context: {} as Execution, events: {} as ExecutionEvent, input: {} as Execution },
  guards: {
    withinHold: ({ context, event }: Args) => chargedOf(event) >= 0n && chargedOf(event) <= BigInt(context.reserved),
    /** What the provider took is what was signed for it. */
    asAuthorized: ({ context, event }: Args) => context.authorization !== null && chargedOf(event) === BigInt(context.authorization.charged) && chargedOf(event) <= BigInt(context.reserved),
    authorizedWithinHold: ({ context, event }: Args) => event.type === 'pay' && BigInt(event.authorization.charged) > 0n && BigInt(event.authorization.charged) <= BigInt(context.reserved),
  },
  actions: {
    noteAuthorization: assign(({ event }: Args) => (event.type === 'pay' ? { authorization: event.authorization } : {})),
    charge: assign(({ context, event }: Args) =>
      event.type === 'succeed' || event.type === 'chargeUnanswered'
        ? {
            charged: event.charged,
            released: (BigInt(context.reserved) - BigInt(event.charged)).toString(),
            outputHash: event.type === 'succeed' ? event.outputHash : null,
            providerPayment: event.providerPayment,
            error: event.type === 'succeed' ? null : event.reason,
            finishedAt: event.at,
            ledgerTxIds: [...context.ledgerTxIds, event.transactionId],
          }
        : {},
    ),
    giveBack: assign(({ context, event }: Args) =>
      event.type === 'fail' || event.type === 'lapse' ? { charged: '0', released: context.reserved, error: event.reason, finishedAt: event.at, ledgerTxIds: [...context.ledgerTxIds, event.transactionId] } : {},
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
        pay: { guard: 'authorizedWithinHold', target: 'paying', actions: 'noteAuthorization' },
        succeed: { guard: 'withinHold', target: 'succeeded', actions: 'charge' },
        fail: { target: 'failed', actions: 'giveBack' },
      },
    },
    paying: {
      on: {
        succeed: { guard: 'asAuthorized', target: 'succeeded', actions: 'charge' },
        chargeUnanswered: { guard: 'asAuthorized', target: 'unanswered', actions: 'charge' },
        lose: { target: 'ambiguous', actions: 'noteLoss' },
      },
    },
    ambiguous: {
      on: {
        // An answer that came after the keeper took the call for lost (it outlived the cut-off) is still an answer.
        succeed: { guard: 'asAuthorized', target: 'succeeded', actions: 'charge' },
        chargeUnanswered: { guard: 'asAuthorized', target: 'unanswered', actions: 'charge' },
        lapse: { target: 'failed', actions: 'giveBack' },
      },
    },
    succeeded: { type: 'final' },
    unanswered: { type: 'final' },
    failed: { type: 'final' },
  },
});

/** The execution after `event`, or undefined when the machine refuses it. */
export const nextExecution = (execution: Execution, event: ExecutionEvent): Execution | undefined => statusStep(executionMachine, execution, event);
