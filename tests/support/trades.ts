import * as assert from 'uvu/assert';
import { newParties, tradeSpec } from './parties.js';
import type { Stack } from './stack.js';

// Trades brought to a given state over HTTP, for tests that start from there.

/** A new trade in CREATED in which the buyer has funded. */
export async function buyerFundedPact(stack: Stack) {
  const { seller, buyer } = newParties();
  const created = await stack.client.create(seller, tradeSpec(seller, buyer));
  assert.is(created.status, 200, JSON.stringify(created.body));
  const id = created.body.pact.id as string;
  assert.is((await stack.client.fund(buyer, id)).status, 200);
  return { seller, buyer, id };
}

export async function activePact(stack: Stack) {
  const { seller, buyer, id } = await buyerFundedPact(stack);
  const funded = await stack.client.fund(seller, id);
  assert.is(funded.status, 200, JSON.stringify(funded.body));
  assert.is(funded.body.pact.state, 'ACTIVE');
  return { seller, buyer, id };
}

export async function disputedPact(stack: Stack) {
  const parties = await activePact(stack);
  const { seller, buyer, id } = parties;
  await stack.client.propose(seller, id, { evidence: [{ note: 'done' }], distribution: [{ party: seller.party, bp: 10000 }] });
  const disputed = await stack.client.object(buyer, id, 'the summary is 900 words');
  assert.is(disputed.status, 200, JSON.stringify(disputed.body));
  assert.is(disputed.body.pact.state, 'DISPUTED');
  return { ...parties, inputHash: disputed.body.pact.inputHash as string };
}

/** A new trade on `rail` (the real rails' tests: nobody has funded yet). */
export async function railPact(stack: Stack, rail: 'x402' | 'mpp') {
  const { seller, buyer } = newParties();
  const created = await stack.client.create(seller, tradeSpec(seller, buyer, { rail }));
  assert.is(created.status, 200, JSON.stringify(created.body));
  return { seller, buyer, id: created.body.pact.id as string };
}
