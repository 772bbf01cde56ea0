import type { PactSpec } from '../../machines/pact/spec.js';
import { generateKeyPair, type KeyPair } from '../../protocol/sign.js';
import { usdc } from './pacts.js';

/** A seller who proposes and a buyer who pays: the common two-party pact. */
export function tradeSpec(seller: KeyPair, buyer: KeyPair, overrides: Partial<PactSpec> = {}): PactSpec {
  return {
    rail: 'mock',
    parties: [
      { party: seller.party, deposit: usdc(0), bond: usdc(50), required: true },
      { party: buyer.party, deposit: usdc(1001), bond: usdc(75), required: true },
    ],
    proposer: seller.party,
    terms: { spec: 'summarise the attached paper in 200 words' },
    minParties: 2,
    ...overrides,
  };
}

export const newParties = () => ({ seller: generateKeyPair(), buyer: generateKeyPair() });
