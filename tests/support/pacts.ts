import { newPact, type PactSpec, type ServerPolicy } from '../../machines/pact/spec.js';
import type { Pact } from '../../machines/pact/types.js';
import { generateKeyPair, type KeyPair } from '../../protocol/sign.js';

export const usdc = (amount: string | number) => ({ amount: String(amount), asset: 'USDC' });

export const evaluatorKey = generateKeyPair();
export const feeRecipient = generateKeyPair();

export const policy: ServerPolicy = {
  evaluator: { pubkey: evaluatorKey.party, promptVersion: 'v1', model: 'stub', timeoutMs: 86_400_000, onFailure: 'refund' },
  arbitrationFeeRecipient: feeRecipient.party,
};

/** A two-party spec: `a` proposes and puts in the pot, `b` receives; both post bonds. */
export function twoPartySpec(a: KeyPair, b: KeyPair, overrides: Partial<PactSpec> = {}): PactSpec {
  return {
    rail: 'mock',
    parties: [
      { party: a.party, deposit: usdc(0), bond: usdc(100), required: true },
      { party: b.party, deposit: usdc(1000), bond: usdc(100), required: true },
    ],
    proposer: a.party,
    terms: { spec: 'deliver a summary' },
    minParties: 2,
    ...overrides,
  };
}

export function pactFrom(spec: PactSpec, at = 1_000_000): Pact {
  return newPact({ id: 'p_test', spec, createdBy: spec.parties[0]!.party, at, policy, escrowAccount: 'mock:escrow' });
}
