import { canonicalHashHex } from '../../protocol/digest.js';
import type { PartyId } from '../../protocol/party.js';
import { MAX_FUNDING_ROUNDS } from './limits.js';
import type { FeeFrom, Pact, PactParty, PactState, Proposal, Share } from './types.js';

/** A deadline is due from its instant on. */
export const isDue = (deadline: number | null, at: number): boolean => deadline !== null && at >= deadline;

export const partyOf = (pact: Pact, party: PartyId): PactParty | undefined =>
  pact.parties.find((p) => p.party === party);

export const isFunded = (pact: Pact, party: PartyId): boolean => partyOf(pact, party)?.confirmed === true;

/** The party has used up its funding rounds: it funded MAX_FUNDING_ROUNDS times and withdrew each time. */
export const fundingRoundsExhausted = (pact: Pact, party: PartyId): boolean =>
  (partyOf(pact, party)?.withdrawals ?? 0) >= MAX_FUNDING_ROUNDS;

export const isNonProposerParty = (pact: Pact, party: PartyId): boolean =>
  party !== pact.proposer && partyOf(pact, party) !== undefined;

/** Every required party funded and at least `minParties` funded. */
export function activationReady(pact: Pact): boolean {
  const funded = pact.parties.filter((p) => p.confirmed);
  return pact.parties.every((p) => !p.required || p.confirmed) && funded.length >= pact.minParties;
}

/** The parties whose cosign settles a proposal: every funded non-proposer. */
export const cosigners = (pact: Pact): PartyId[] =>
  pact.parties.filter((p) => p.confirmed && p.party !== pact.proposer).map((p) => p.party);

export const hasCosigned = (pact: Pact, party: PartyId): boolean => pact.cosigns.some((c) => c.party === party);

export function allCosignedWith(pact: Pact, party: PartyId): boolean {
  return cosigners(pact).every((p) => p === party || hasCosigned(pact, p));
}

/** What a pact's next deadline depends on: its state and its deadlines (a list summary has them too). */
export type Deadlines = Pick<Pact, 'state' | 'fundBy' | 'performBy' | 'objectBy' | 'verdictBy'>;

/** The deadline that ends the current state, if it has one. */
export function currentDeadline(pact: Deadlines): number | null {
  const byState: Record<PactState, number | null> = {
    CREATED: pact.fundBy,
    ACTIVE: pact.performBy,
    PROPOSED: pact.objectBy,
    DISPUTED: pact.verdictBy,
    SETTLED: null,
    CANCELLED: null,
  };
  return byState[pact.state];
}

/** Mutual cancel needs every party's approval. */
export const approvedByAll = (pact: Pact, approvedBy: PartyId[]): boolean =>
  pact.parties.every((p) => approvedBy.includes(p.party));

/** Why shares cannot form a distribution of any pot: bad bp values, repeats, or a sum other than 10000. */
export function sharesProblem(shares: Share[]): string | undefined {
  const odd = shares.find((s) => !Number.isInteger(s.bp) || s.bp < 0 || s.bp > 10_000);
  if (odd) return `bp must be an integer from 0 to 10000, got ${odd.bp}`;
  const parties = new Set(shares.map((s) => s.party));
  if (parties.size !== shares.length) return 'a party appears twice in the distribution';
  const total = shares.reduce((sum, s) => sum + s.bp, 0);
  return total === 10_000 ? undefined : `bp values sum to ${total}, not 10000`;
}

/** Why a distribution cannot stand for this pact, or undefined when it can. */
export function distributionProblem(pact: Pact, shares: Share[]): string | undefined {
  return sharesAmongProblem(shares, (party) => isFunded(pact, party));
}

/** Why shares cannot distribute a pot among the parties `funded` accepts. */
export function sharesAmongProblem(shares: Share[], funded: (party: PartyId) => boolean): string | undefined {
  const outsider = shares.find((s) => !funded(s.party));
  if (outsider) return `${outsider.party} is not a funded party of this pact`;
  return sharesProblem(shares);
}

/** Whether two distributions pay every party the same (a party left out gets 0 bp). */
export function sameDistribution(a: Share[], b: Share[]): boolean {
  const bpOf = (shares: Share[], party: PartyId) => shares.find((s) => s.party === party)?.bp ?? 0;
  return [...a, ...b].every((s) => bpOf(a, s.party) === bpOf(b, s.party));
}

/**
 * Why a verdict's `feeFrom` contradicts its distribution (the spec's bond table): upholding the proposal
 * (`objector` pays) pays the pot as proposed; upholding the objection (`proposer` pays) changes it.
 */
export function verdictProblem(proposed: Share[], distribution: Share[], feeFrom: FeeFrom): string | undefined {
  const same = sameDistribution(proposed, distribution);
  if (feeFrom === 'objector' && !same) return 'feeFrom objector upholds the proposal, so the distribution must be the proposal’s';
  if (feeFrom === 'proposer' && same) return 'feeFrom proposer upholds the objection, so the distribution must differ from the proposal’s';
  return undefined;
}

/** Freezes terms, proposer, evidence and distribution. */
export function inputHashOf(pact: Pact, proposal: Proposal): string {
  return canonicalHashHex({
    terms: pact.terms,
    proposer: pact.proposer,
    evidence: proposal.evidence,
    distribution: proposal.distribution,
  });
}
