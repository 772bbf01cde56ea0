import { and, assign, setup } from 'xstate';
import type { PactEvent } from './events.js';
import * as record from './records.js';
import { accepts } from './decide.js';
import { activationReady, allCosignedWith, isDue } from './rules.js';
import type { Pact, PactState } from './types.js';

type Of<T extends PactEvent['type']> = Extract<PactEvent, { type: T }>;
type Args = { context: Pact; event: PactEvent };

/** A guard that holds only for events of `type`, narrowed for `check`. */
const when =
  <T extends PactEvent['type']>(type: T, check: (pact: Pact, event: Of<T>) => boolean) =>
  ({ context, event }: Args) =>
    event.type === type && check(context, event as Of<T>);

/** A context update for events of `type`; other events leave the context alone. */
const update =
  <T extends PactEvent['type']>(type: T, change: (pact: Pact, event: Of<T>) => Pact) =>
  ({ context, event }: Args): Pact =>
    event.type === type ? change(context, event as Of<T>) : context;

const enter = (state: PactState) => ({ type: 'enterState' as const, params: { state } });

/**
 * The pact lifecycle. Pure: no clock, no I/O; every event carries its own `at`. Deadlines are absolute
 * times in the context, checked by guards; a keeper or anyone's poke delivers the `poke` event.
 * SETTLED and CANCELLED are not XState final states, because payouts are still recorded on them.
 */
export const pactMachine = setup({
  types: { context: {} as Pact, events: {} as PactEvent, input: {} as Pact },
  guards: {
    /** The event's command meets no refusal in `decide.ts`: the one statement of who may do what, when. */
    accepted: ({ context, event }) => accepts(context, event),
    fundingActivates: when('fund', (context, event) => activationReady(record.recordFunding(context, event))),
    fundDeadlineActivates: when('poke', (context, event) => isDue(context.fundBy, event.at) && activationReady(context)),
    fundDeadlinePassed: when('poke', (context, event) => isDue(context.fundBy, event.at)),
    performDeadlinePassed: when('poke', (context, event) => isDue(context.performBy, event.at)),
    lastCosign: when('cosign', (context, event) => allCosignedWith(context, event.party)),
    objectDeadlinePassed: when('poke', (context, event) => isDue(context.objectBy, event.at)),
    verdictDeadlinePassed: when('poke', (context, event) => isDue(context.verdictBy, event.at)),
    /** The report names a payout of the pact still pending (a payout is recorded once). */
    pendingPayout: when('payoutsRecorded', (context, event) => record.hasPendingPayout(context, event.paid.map((p) => p.key))),
  },
  actions: {
    enterState: assign((_, params: { state: PactState }) => ({ state: params.state })),
    stamp: assign(({ context, event }) => record.stamp(context, event.at)),
    recordFunding: assign(update('fund', record.recordFunding)),
    recordWithdrawal: assign(update('withdraw', record.recordWithdrawal)),
    activate: assign(({ context, event }) => record.activate(context, event.at)),
    recordProposal: assign(update('propose', record.recordProposal)),
    recordCosign: assign(update('cosign', record.recordCosign)),
    settleByCosign: assign(({ context, event }) => record.settleAsProposed(context, event.at, 'settled_by_cosign')),
    settleBySilence: assign(({ context, event }) => record.settleAsProposed(context, event.at, 'settled_by_silence')),
    recordObjection: assign(update('object', record.recordObjection)),
    applyVerdict: assign(update('verdict', (pact, event) => record.applyVerdict(pact, event.verdict))),
    refundFundDeadline: assign(({ context, event }) => record.refundAll(context, event.at, 'cancelled_fund_deadline')),
    refundPerformDeadline: assign(({ context, event }) =>
      record.refundAll(context, event.at, 'cancelled_perform_deadline'),
    ),
    refundVerdictDeadline: assign(({ context, event }) =>
      record.refundAll(context, event.at, 'cancelled_verdict_deadline'),
    ),
    refundMutualCancel: assign(({ context, event }) => record.refundAll(context, event.at, 'cancelled_mutual')),
    recordPayouts: assign(update('payoutsRecorded', record.recordPayouts)),
  },
}).createMachine({
  id: 'pact',
  context: ({ input }) => input,
  initial: 'CREATED',
  on: {
    payoutsRecorded: {
      guard: 'pendingPayout',
      actions: ['recordPayouts', 'stamp'],
    },
  },
  states: {
    CREATED: {
      entry: enter('CREATED'),
      on: {
        fund: [
          { guard: and(['accepted', 'fundingActivates']), target: 'ACTIVE', actions: ['recordFunding', 'activate', 'stamp'] },
          { guard: 'accepted', actions: ['recordFunding', 'stamp'] },
        ],
        withdraw: { guard: 'accepted', actions: ['recordWithdrawal', 'stamp'] },
        poke: [
          { guard: 'fundDeadlineActivates', target: 'ACTIVE', actions: ['activate', 'stamp'] },
          { guard: 'fundDeadlinePassed', target: 'CANCELLED', actions: ['refundFundDeadline', 'stamp'] },
        ],
      },
    },
    ACTIVE: {
      entry: enter('ACTIVE'),
      on: {
        propose: { guard: 'accepted', target: 'PROPOSED', actions: ['recordProposal', 'stamp'] },
        cancel: { guard: 'accepted', target: 'CANCELLED', actions: ['refundMutualCancel', 'stamp'] },
        poke: { guard: 'performDeadlinePassed', target: 'CANCELLED', actions: ['refundPerformDeadline', 'stamp'] },
      },
    },
    PROPOSED: {
      entry: enter('PROPOSED'),
      on: {
        cosign: [
          { guard: and(['accepted', 'lastCosign']), target: 'SETTLED', actions: ['recordCosign', 'settleByCosign', 'stamp'] },
          { guard: 'accepted', actions: ['recordCosign', 'stamp'] },
        ],
        object: { guard: 'accepted', target: 'DISPUTED', actions: ['recordObjection', 'stamp'] },
        cancel: { guard: 'accepted', target: 'CANCELLED', actions: ['refundMutualCancel', 'stamp'] },
        poke: { guard: 'objectDeadlinePassed', target: 'SETTLED', actions: ['settleBySilence', 'stamp'] },
      },
    },
    DISPUTED: {
      entry: enter('DISPUTED'),
      on: {
        verdict: { guard: 'accepted', target: 'SETTLED', actions: ['applyVerdict', 'stamp'] },
        poke: { guard: 'verdictDeadlinePassed', target: 'CANCELLED', actions: ['refundVerdictDeadline', 'stamp'] },
      },
    },
    SETTLED: { entry: enter('SETTLED') },
    CANCELLED: { entry: enter('CANCELLED') },
  },
});
