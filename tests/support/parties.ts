import type { PactSpec } from '../../machines/pact/spec.js';
import { generateKeyPair, type KeyPair } from '../../protocol/sign.js';
import { twoPartySpec } from './pacts.js';

/**
 * A seller who proposes and a buyer who pays, as the HTTP tests use it: odd amounts (deposit 1001,
 * bonds 50 and 75) so that rounding and fee splits show in the payouts.
 */
export const tradeSpec = (seller: KeyPair, buyer: KeyPair, overrides: Partial<PactSpec> = {}): PactSpec =>
  twoPartySpec(seller, buyer, overrides, { proposerBond: 50, payerDeposit: 1001, payerBond: 75 });

export const newParties = () => ({ seller: generateKeyPair(), buyer: generateKeyPair() });
