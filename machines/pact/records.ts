import type { PartyId } from '../../protocol/party.js';
import type { PactEvent } from './events.js';
import { inputHashOf } from './rules.js';
import { distributionSettlement, payoutsOf, refundSettlement, refundsOf, verdictForfeits } from './settlement.js';
import type { Outcome, Pact, PactParty, Settlement, Verdict } from './types.js';

// Pure context updates the machine's transitions apply. Each returns a new Pact.

type Of<T extends PactEvent['type']> = Extract<PactEvent, { type: T }>;

/** Every accepted event advances the nonce; payout keys use the nonce as the transition's id. */
export function stamp(pact: Pact, at: number): Pact {
  return { ...pact, stateNonce: pact.stateNonce + 1, updatedAt: at };
}

const transitionId = (pact: Pact, name: string) => `${name}.${pact.stateNonce + 1}`;

function withParty(pact: Pact, party: PartyId, change: (p: PactParty) => PactParty): Pact {
  return { ...pact, parties: pact.parties.map((p) => (p.party === party ? change(p) : p)) };
}

export function recordFunding(pact: Pact, event: Of<'fund'>): Pact {
  return withParty(pact, event.party, (p) => ({
    ...p,
    confirmed: true,
    paidPot: p.deposit.amount,
    paidBond: p.bond.amount,
    fundedAt: event.at,
    receipt: event.receipt,
  }));
}

export function recordWithdrawal(pact: Pact, event: Of<'withdraw'>): Pact {
  const leaving = pact.parties.find((p) => p.party === event.party);
  if (!leaving) return pact;
  const payouts = payoutsOf(pact, transitionId(pact, 'withdraw'), refundsOf([leaving]));
  const emptied = withParty(pact, event.party, (p) => ({
    ...p,
    confirmed: false,
    paidPot: '0',
    paidBond: '0',
    fundedAt: null,
    receipt: null,
    withdrawals: p.withdrawals + 1,
  }));
  return { ...emptied, payouts: [...pact.payouts, ...payouts] };
}

/** Drops unfunded optional parties and starts the perform window. */
export function activate(pact: Pact, at: number): Pact {
  return {
    ...pact,
    parties: pact.parties.filter((p) => p.confirmed),
    activeAt: at,
    performBy: at + pact.windows.perform,
  };
}

export function recordProposal(pact: Pact, event: Of<'propose'>): Pact {
  return {
    ...pact,
    proposal: event.proposal,
    inputHash: inputHashOf(pact, event.proposal),
    proposedAt: event.at,
    objectBy: event.at + pact.windows.object,
  };
}

export function recordCosign(pact: Pact, event: Of<'cosign'>): Pact {
  return { ...pact, cosigns: [...pact.cosigns, { party: event.party, at: event.at }] };
}

export function recordObjection(pact: Pact, event: Of<'object'>): Pact {
  return {
    ...pact,
    objection: { by: event.party, reason: event.reason, at: event.at },
    disputedAt: event.at,
    verdictBy: event.at + pact.evaluator.timeoutMs,
  };
}

function close(pact: Pact, at: number, name: string, settlement: Settlement): Pact {
  return {
    ...pact,
    closedAt: at,
    settlement,
    payouts: [...pact.payouts, ...payoutsOf(pact, transitionId(pact, name), settlement)],
  };
}

export function refundAll(pact: Pact, at: number, outcome: Outcome): Pact {
  return close(pact, at, outcome === 'cancelled_mutual' ? 'cancel' : 'refund', refundSettlement(pact, outcome));
}

export function settleAsProposed(pact: Pact, at: number, outcome: Outcome): Pact {
  const shares = pact.proposal?.distribution ?? [];
  return close(pact, at, 'settle', distributionSettlement(pact, outcome, shares));
}

export function applyVerdict(pact: Pact, verdict: Verdict): Pact {
  const withVerdict = { ...pact, verdict };
  const settlement = distributionSettlement(
    withVerdict,
    'settled_by_verdict',
    verdict.distribution,
    verdictForfeits(pact, verdict.feeFrom),
  );
  return close(withVerdict, verdict.at, 'verdict', settlement);
}

export function recordPayouts(pact: Pact, event: Of<'payoutsRecorded'>): Pact {
  const refs = new Map(event.paid.map((p) => [p.key, p.railRef]));
  return {
    ...pact,
    payouts: pact.payouts.map((p) =>
      p.status === 'pending' && refs.has(p.key) ? { ...p, status: 'paid' as const, railRef: refs.get(p.key)! } : p,
    ),
  };
}

export const hasPendingPayout = (pact: Pact, keys: string[]): boolean =>
  pact.payouts.some((p) => p.status === 'pending' && keys.includes(p.key));
