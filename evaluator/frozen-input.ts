import { potOf } from '../machines/pact/settlement.js';
import { inputHashOf } from '../machines/pact/rules.js';
import type { Pact } from '../machines/pact/types.js';
import type { EvidenceBudget, EvidenceSeen, FrozenInput } from './judge.js';
import type { ServiceClient } from './service-client.js';

/** A pact whose dispute can be judged: DISPUTED, with the proposal and objection that led there. */
type Disputed = Pact & { state: 'DISPUTED'; proposal: NonNullable<Pact['proposal']>; objection: NonNullable<Pact['objection']>; inputHash: string };

export const isDisputed = (pact: Pact): pact is Disputed =>
  pact.state === 'DISPUTED' && pact.proposal !== null && pact.objection !== null && pact.inputHash !== null;

/**
 * The input of a dispute, as frozen at the proposal: terms, proposer, evidence (blobs read through links,
 * within `budget`) and distribution, which must hash to the pact's `inputHash`, plus the objection.
 */
export async function frozenInputOf(pact: Disputed, service: ServiceClient, budget: EvidenceBudget): Promise<FrozenInput> {
  if (inputHashOf(pact, pact.proposal) !== pact.inputHash) throw new Error(`pact ${pact.id}: its proposal does not hash to its inputHash`);
  const evidence: EvidenceSeen[] = [];
  let left = budget.total;
  for (const item of pact.proposal.evidence) {
    if (!('blob' in item)) {
      evidence.push(item);
      continue;
    }
    const { size, head } = await service.blob(pact.id, item.blob, Math.min(budget.perBlob, left));
    left -= head.length;
    evidence.push({ ...item, size, bytes: head });
  }
  const funded = pact.parties.filter((p) => p.confirmed);
  return {
    pactId: pact.id,
    policy: { model: pact.evaluator.model, promptVersion: pact.evaluator.promptVersion },
    inputHash: pact.inputHash,
    terms: pact.terms,
    proposer: pact.proposer,
    parties: funded.map((p) => ({ party: p.party, deposit: p.paidPot, bond: p.paidBond })),
    asset: pact.asset,
    pot: potOf(pact).toString(),
    distribution: pact.proposal.distribution,
    evidence,
    objection: { by: pact.objection.by, reason: pact.objection.reason },
  };
}
