import { pactError, type PactError } from '../../protocol/errors.js';
import type { PactCommand } from './commands.js';
import type { PactEvent } from './events.js';
import {
  approvedByAll,
  currentDeadline,
  distributionProblem,
  hasCosigned,
  isDue,
  isFunded,
  fundingRoundsExhausted,
  isNonProposerParty,
  partyOf,
  verdictProblem,
} from './rules.js';
import { MAX_FUNDING_ROUNDS } from './limits.js';
import type { Pact, PactState, Share } from './types.js';

type Of<T extends PactCommand['type']> = Extract<PactCommand, { type: T }>;
type Check = () => PactError | undefined;

const forbidden = (message: string, details: Record<string, unknown> = {}) => pactError('forbidden', message, details);

function nonce(pact: Pact, stateNonce: number): Check {
  return () =>
    stateNonce === pact.stateNonce
      ? undefined
      : pactError('stateNonce_mismatch', 'stateNonce is not the pact’s current nonce', { currentNonce: pact.stateNonce });
}

function inState(pact: Pact, ...states: PactState[]): Check {
  return () =>
    states.includes(pact.state)
      ? undefined
      : pactError('invalid_state', `not allowed in state ${pact.state}`, { state: pact.state });
}

function notDue(deadline: number | null, now: number, name: string): Check {
  return () => (isDue(deadline, now) ? pactError('deadline_passed', `${name} has passed`, { [name]: deadline }) : undefined);
}

function invalidShares(pact: Pact, shares: Share[], field: string): Check {
  return () => {
    const problem = distributionProblem(pact, shares);
    return problem ? pactError('invalid_request', problem, { field }) : undefined;
  };
}

const firstRefusal = (checks: Check[]): PactError | undefined => {
  for (const check of checks) {
    const refusal = check();
    if (refusal) return refusal;
  }
  return undefined;
};

/**
 * Why `command` must be refused now, checked in the spec's order: authorization (403), then
 * `stateNonce` (409), then state (409), then time (422), then content the pact decides (400).
 * Signatures (401) are checked before a command exists, except the verdict's pinned key.
 */
export function refusal(pact: Pact, command: PactCommand, now: number): PactError | undefined {
  switch (command.type) {
    case 'fund':
      return firstRefusal([
        () => (partyOf(pact, command.signer) ? undefined : forbidden('only a party of the pact may fund it')),
        nonce(pact, command.stateNonce),
        () => (isFunded(pact, command.signer) ? pactError('already_funded', 'this party has funded already') : undefined),
        () =>
          fundingRoundsExhausted(pact, command.signer)
            ? pactError('funding_rounds_exhausted', `a party may fund a pact at most ${MAX_FUNDING_ROUNDS} times`, { maxFundingRounds: MAX_FUNDING_ROUNDS })
            : undefined,
        inState(pact, 'CREATED'),
        notDue(pact.fundBy, now, 'fundBy'),
      ]);
    case 'withdraw':
      return firstRefusal([
        () => (isFunded(pact, command.signer) ? undefined : forbidden('only a funded party may withdraw')),
        nonce(pact, command.stateNonce),
        inState(pact, 'CREATED'),
        notDue(pact.fundBy, now, 'fundBy'),
      ]);
    case 'propose':
      return firstRefusal([
        () => (command.signer === pact.proposer ? undefined : forbidden('only the proposer may propose')),
        nonce(pact, command.stateNonce),
        inState(pact, 'ACTIVE'),
        notDue(pact.performBy, now, 'performBy'),
        invalidShares(pact, command.proposal.distribution, 'call.distribution'),
      ]);
    case 'cosign':
    case 'object':
      return refuseResponse(pact, command, now);
    case 'cancel':
      return refuseCancel(pact, command, now);
    case 'verdict':
      return refuseVerdict(pact, command, now);
    case 'poke':
    case 'recordPayouts':
      return undefined;
  }
}

function refuseResponse(pact: Pact, command: Of<'cosign'> | Of<'object'>, now: number): PactError | undefined {
  return firstRefusal([
    () =>
      isNonProposerParty(pact, command.signer) ? undefined : forbidden(`only a non-proposer party may ${command.type}`),
    nonce(pact, command.stateNonce),
    () => (hasCosigned(pact, command.signer) ? pactError('already_cosigned', 'this party has cosigned') : undefined),
    inState(pact, 'PROPOSED'),
    notDue(pact.objectBy, now, 'objectBy'),
  ]);
}

function refuseCancel(pact: Pact, command: Of<'cancel'>, now: number): PactError | undefined {
  const deadline = currentDeadline(pact);
  return firstRefusal([
    () => (partyOf(pact, command.signer) ? undefined : forbidden('only a party may cancel')),
    () =>
      approvedByAll(pact, command.approvedBy)
        ? undefined
        : forbidden('mutual cancel needs a valid approval of every party', {
            missing: pact.parties.map((p) => p.party).filter((p) => !command.approvedBy.includes(p)),
          }),
    nonce(pact, command.stateNonce),
    inState(pact, 'ACTIVE', 'PROPOSED'),
    notDue(deadline, now, pact.state === 'ACTIVE' ? 'performBy' : 'objectBy'),
    () => (command.expiresAt <= now ? pactError('deadline_passed', 'the cancel approvals have expired') : undefined),
    () =>
      deadline !== null && command.expiresAt > deadline
        ? pactError('expiresAt_after_deadline', 'expiresAt is after the current deadline', { deadline })
        : undefined,
  ]);
}

function refuseVerdict(pact: Pact, command: Of<'verdict'>, now: number): PactError | undefined {
  const verdict = command.verdict;
  return firstRefusal([
    () =>
      verdict.signer === pact.evaluator.pubkey && verdict.pactId === pact.id
        ? undefined
        : pactError('invalid_signature', 'the verdict is not signed by the pinned evaluator for this pact'),
    inState(pact, 'DISPUTED'),
    () =>
      verdict.inputHash === pact.inputHash
        ? undefined
        : pactError('inputHash_mismatch', 'the verdict judges another input', { inputHash: pact.inputHash }),
    notDue(pact.verdictBy, now, 'verdictBy'),
    invalidShares(pact, verdict.distribution, 'distribution'),
    () => {
      const problem = verdictProblem(pact.proposal?.distribution ?? [], verdict.distribution, verdict.feeFrom);
      return problem ? pactError('invalid_request', problem, { field: 'feeFrom' }) : undefined;
    },
  ]);
}

/**
 * The command that `event` carries out, as its party would have sent it on the pact's current nonce, so that
 * the machine's guards accept exactly what `refusal` lets through: the rules are stated once, here.
 * Pokes and recorded payouts are never refused; the machine's own branches decide what they do.
 */
function commandOf(pact: Pact, event: PactEvent): PactCommand | undefined {
  const stateNonce = pact.stateNonce;
  switch (event.type) {
    case 'fund':
      return { type: 'fund', signer: event.party, stateNonce, proof: null };
    case 'withdraw':
    case 'cosign':
      return { type: event.type, signer: event.party, stateNonce };
    case 'propose':
      return { type: 'propose', signer: event.party, stateNonce, proposal: event.proposal };
    case 'object':
      return { type: 'object', signer: event.party, stateNonce, reason: event.reason };
    case 'cancel':
      return { type: 'cancel', signer: event.party, stateNonce, expiresAt: event.expiresAt, approvedBy: event.approvedBy };
    case 'verdict':
      return { type: 'verdict', verdict: event.verdict };
    case 'poke':
    case 'payoutsRecorded':
      return undefined;
  }
}

/** Whether the machine may apply `event` to `pact`: exactly when its command meets no refusal. */
export function accepts(pact: Pact, event: PactEvent): boolean {
  const command = commandOf(pact, event);
  return command !== undefined && refusal(pact, command, event.at) === undefined;
}

/** The machine event that carries out an accepted command at `at`. Funding needs the rail's receipt. */
export function eventOf(command: Exclude<PactCommand, { type: 'fund' }>, at: number): PactEvent {
  switch (command.type) {
    case 'withdraw':
    case 'cosign':
      return { type: command.type, at, party: command.signer };
    case 'propose':
      return { type: 'propose', at, party: command.signer, proposal: command.proposal };
    case 'object':
      return { type: 'object', at, party: command.signer, reason: command.reason };
    case 'cancel':
      return { type: 'cancel', at, party: command.signer, approvedBy: command.approvedBy, expiresAt: command.expiresAt };
    case 'verdict':
      return { type: 'verdict', at, verdict: { ...command.verdict, at } };
    case 'poke':
      return { type: 'poke', at };
    case 'recordPayouts':
      return { type: 'payoutsRecorded', at, paid: command.paid };
  }
}
