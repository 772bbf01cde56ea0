import { sameDistribution } from '../../machines/pact/rules.js';
import type { Share } from '../../machines/pact/types.js';
import type { FrozenInput, Judge, Judgement } from '../judge.js';

/**
 * A deterministic offline judgement of the frozen input, for staging (README, "The evaluator"). It reads
 * only what it can check without a network:
 * - evidence with at least one blob (delivered bytes it has read): the proposal is upheld (`objector` pays);
 * - evidence of links only, which it cannot follow offline: half way between the proposal and a refund,
 *   the fee `split`;
 * - no evidence, or notes only: the objection is upheld, every party gets back its share of the pot in
 *   proportion to its deposit, and the `proposer` pays (unless the proposal did just that: then it stands).
 */
export class SandboxJudge implements Judge {
  readonly mode = 'sandbox' as const;
  readonly evidenceBytes = { perBlob: 0, total: 0 };

  async judge(input: FrozenInput): Promise<Judgement> {
    const refund = refundShares(input);
    if (input.evidence.some((item) => 'blob' in item)) {
      return { distribution: input.distribution, feeFrom: 'objector', reason: 'sandbox: the evidence includes delivered blobs, so the proposal stands' };
    }
    if (input.evidence.some((item) => 'url' in item)) {
      return { distribution: halfWay(input.distribution, refund), feeFrom: 'split', reason: 'sandbox: the evidence is links that cannot be checked offline, so the pot is split half way' };
    }
    if (sameDistribution(refund, input.distribution)) {
      return { distribution: refund, feeFrom: 'objector', reason: 'sandbox: the proposal already gives the deposits back' };
    }
    return { distribution: refund, feeFrom: 'proposer', reason: 'sandbox: nothing delivered was shown, so the deposits go back' };
  }
}

/** Basis points that give each funded party its deposit back; the units lost to rounding go to the first. */
export function refundShares(input: FrozenInput): Share[] {
  const pot = BigInt(input.pot);
  const shares = input.parties.map((p) => ({ party: p.party, bp: pot === 0n ? 0 : Number((BigInt(p.deposit) * 10_000n) / pot) }));
  return withRoundingToFirst(shares);
}

/** The mean of two distributions over the same parties, party by party (the proposal's order). */
export function halfWay(a: Share[], b: Share[]): Share[] {
  const parties = [...new Set([...a, ...b].map((s) => s.party))];
  const bpOf = (shares: Share[], party: string) => shares.find((s) => s.party === party)?.bp ?? 0;
  return withRoundingToFirst(parties.map((party) => ({ party, bp: Math.floor((bpOf(a, party) + bpOf(b, party)) / 2) })));
}

function withRoundingToFirst(shares: Share[]): Share[] {
  const missing = 10_000 - shares.reduce((sum, s) => sum + s.bp, 0);
  return shares.map((s, index) => (index === 0 ? { ...s, bp: s.bp + missing } : s));
}
