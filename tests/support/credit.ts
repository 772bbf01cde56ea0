import * as assert from 'uvu/assert';
import type { PactSpec } from '../../machines/pact/spec.js';
import type { KeyPair } from '../../protocol/sign.js';
import { newParties } from './parties.js';
import type { Stack } from './stack.js';
import { pairedWallet, usd, walletCall } from './wallet-client.js';

// Parties paying from wallet credit (the credit rail's tests): wallets topped up through mock checkouts, bound.

/** Wallets are topped up through checkouts of at least 1 USD (1000000 micro-USD). */
export const ONE = '1000000';
export const TEN = '10000000';
export const less = (amount: number) => (BigInt(TEN) - BigInt(amount)).toString();
export const more = (amount: number) => (BigInt(TEN) + BigInt(amount)).toString();

export interface Holder {
  key: KeyPair;
  walletId: string;
  token: string;
  auth: Record<string, string>;
}

/** A party with a wallet holding `funded` micro-USD, bound on the credit rail. */
export async function holder(stack: Stack, key: KeyPair, funded: string, bind = true): Promise<Holder> {
  const { id, auth } = await pairedWallet(stack, funded);
  const token = auth.authorization!.slice('Bearer '.length);
  if (bind) {
    const bound = await stack.client.bindWallet(key, id, token);
    assert.is(bound.status, 200, JSON.stringify(bound.body));
  }
  return { key, walletId: id, token, auth };
}

/** The seller proposes and bonds 50; the buyer deposits 1001 and bonds 75 (USD micro-units). */
export const creditSpec = (seller: KeyPair, buyer: KeyPair): PactSpec => ({
  rail: 'credit',
  parties: [
    { party: seller.party, deposit: usd(0), bond: usd(50), required: true },
    { party: buyer.party, deposit: usd(1001), bond: usd(75), required: true },
  ],
  proposer: seller.party,
  terms: { spec: 'deliver a summary' },
  minParties: 2,
});

export async function walletOf(stack: Stack, holder: Holder) {
  const read = await walletCall(stack, 'GET', `/v1/wallets/${holder.walletId}`, undefined, holder.auth);
  assert.is(read.status, 200, JSON.stringify(read.body));
  const { balance, held, available } = read.body.wallet;
  return { balance: balance.amount, held: held.amount, available: available.amount };
}

export async function creditPact(stack: Stack) {
  const { seller: sellerKey, buyer: buyerKey } = newParties();
  const seller = await holder(stack, sellerKey, TEN);
  const buyer = await holder(stack, buyerKey, TEN);
  const created = await stack.client.create(sellerKey, creditSpec(sellerKey, buyerKey));
  assert.is(created.status, 200, JSON.stringify(created.body));
  return { seller, buyer, id: created.body.pact.id as string };
}

export const fundFromCredit = (stack: Stack, party: Holder, id: string) => stack.client.fundWithCredit(party.key, id, party.walletId, party.token);

