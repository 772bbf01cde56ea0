import { and, assign, setup } from 'xstate';
import type { PactEvent } from './events.js';
import * as record from './records.js';
import {
  activationReady,
  allCosignedWith,
  approvedByAll,
  currentDeadline,
  distributionProblem,
  hasCosigned,
  isDue,
  isFunded,
  isNonProposerParty,
  partyOf,
} from './rules.js';
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
const before = (deadline: number | null, at: number) => !isDue(deadline, at);

/**
 * The pact lifecycle. Pure: no clock, no I/O; every event carries its own `at`. Deadlines are absolute
 * times in the context, checked by guards; a keeper or anyone's poke delivers the `poke` event.
 * SETTLED and CANCELLED are not XState final states, because payouts are still recorded on them.
 */
export const pactMachine = setup({
  types: { context: {} as Pact, events: {} as PactEvent, input: {} as Pact },
  guards: {
    canFund: when('fund', (context, event) =>
      partyOf(context, event.party) !== undefined && !isFunded(context, event.party) && before(context.fundBy, event.at)),
    fundingActivates: when('fund', (context, event) => activationReady(record.recordFunding(context, event))),
    canWithdraw: when('withdraw', (context, event) =>
      isFunded(context, event.party) && before(context.fundBy, event.at)),
    fundDeadlineActivates: when('poke', (context, event) => isDue(context.fundBy, event.at) && activationReady(context)),
    fundDeadlinePassed: when('poke', (context, event) => isDue(context.fundBy, event.at)),
    canPropose: when('propose', (context, event) =>
      event.party === context.proposer &&
      before(context.performBy, event.at) &&
      distributionProblem(context, event.proposal.distribution) === undefined),
    performDeadlinePassed: when('poke', (context, event) => isDue(context.performBy, event.at)),
    canCosign: when('cosign', (context, event) =>
      isNonProposerParty(context, event.party) && !hasCosigned(context, event.party) && before(context.objectBy, event.at)),
    lastCosign: when('cosign', (context, event) => allCosignedWith(context, event.party)),
    canObject: when('object', (context, event) =>
      isNonProposerParty(context, event.party) && !hasCosigned(context, event.party) && before(context.objectBy, event.at)),
    objectDeadlinePassed: when('poke', (context, event) => isDue(context.objectBy, event.at)),
    canCancel: when('cancel', (context, event) =>
      partyOf(context, event.party) !== undefined &&
      approvedByAll(context, event.approvedBy) &&
      event.at < event.expiresAt &&
      before(currentDeadline(context), event.at) &&
      event.expiresAt <= (currentDeadline(context) ?? 0)),
    canApplyVerdict: when('verdict', (context, event) =>
      event.verdict.signer === context.evaluator.pubkey &&
      event.verdict.pactId === context.id &&
      before(context.verdictBy, event.at) &&
      distributionProblem(context, event.verdict.distribution) === undefined),
    verdictDeadlinePassed: when('poke', (context, event) => isDue(context.verdictBy, event.at)),
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
      guard: ({ context, event }) => record.hasPendingPayout(context, event.paid.map((p) => p.key)),
      actions: ['recordPayouts', 'stamp'],
    },
  },
  states: {
    CREATED: {
      entry: enter('CREATED'),
      on: {
        fund: [
          { guard: and(['canFund', 'fundingActivates']), target: 'ACTIVE', actions: ['recordFunding', 'activate', 'stamp'] },
          { guard: 'canFund', actions: ['recordFunding', 'stamp'] },
        ],
        withdraw: { guard: 'canWithdraw', actions: ['recordWithdrawal', 'stamp'] },
        poke: [
          { guard: 'fundDeadlineActivates', target: 'ACTIVE', actions: ['activate', 'stamp'] },
          { guard: 'fundDeadlinePassed', target: 'CANCELLED', actions: ['refundFundDeadline', 'stamp'] },
        ],
      },
    },
    ACTIVE: {
      entry: enter('ACTIVE'),
      on: {
        propose: { guard: 'canPropose', target: 'PROPOSED', actions: ['recordProposal', 'stamp'] },
        cancel: { guard: 'canCancel', target: 'CANCELLED', actions: ['refundMutualCancel', 'stamp'] },
        poke: { guard: 'performDeadlinePassed', target: 'CANCELLED', actions: ['refundPerformDeadline', 'stamp'] },
      },
    },
    PROPOSED: {
      entry: enter('PROPOSED'),
      on: {
        cosign: [
          { guard: and(['canCosign', 'lastCosign']), target: 'SETTLED', actions: ['recordCosign', 'settleByCosign', 'stamp'] },
          { guard: 'canCosign', actions: ['recordCosign', 'stamp'] },
        ],
        object: { guard: 'canObject', target: 'DISPUTED', actions: ['recordObjection', 'stamp'] },
        cancel: { guard: 'canCancel', target: 'CANCELLED', actions: ['refundMutualCancel', 'stamp'] },
        poke: { guard: 'objectDeadlinePassed', target: 'SETTLED', actions: ['settleBySilence', 'stamp'] },
      },
    },
    DISPUTED: {
      entry: enter('DISPUTED'),
      on: {
        verdict: { guard: 'canApplyVerdict', target: 'SETTLED', actions: ['applyVerdict', 'stamp'] },
        poke: { guard: 'verdictDeadlinePassed', target: 'CANCELLED', actions: ['refundVerdictDeadline', 'stamp'] },
      },
    },
    SETTLED: { entry: enter('SETTLED') },
    CANCELLED: { entry: enter('CANCELLED') },
  },
});
