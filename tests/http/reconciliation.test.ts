import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// A crash between the rail's collect and the journal leaves money in escrow that no pact recorded.
// The test hook makes exactly such a collect, under the key the actor would have used.

const HOUR = 3_600_000;
const BUYER_OWES = '1076'; // deposit 1001 + bond 75
const test = suite<{ stack: Stack }>('reconciliation of collects no pact recorded');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

async function pactWithLostCollect(stack: Stack) {
  const { seller, buyer } = newParties();
  const id = (await stack.client.create(seller, tradeSpec(seller, buyer))).body.pact.id as string;
  const key = `${id}:fund.0:${buyer.party}`;
  await stack.mockRail({ collect: { key, payer: buyer.party, amount: BUYER_OWES } });
  return { seller, buyer, id, key };
}

const operationsFor = async (stack: Stack, key: string) =>
  (await stack.ledger()).operations.filter((op) => op.key === key || op.key === `${key}:reversal`);

test('a retried fund reuses the lost collect instead of collecting again', async ({ stack }) => {
  const { buyer, id, key } = await pactWithLostCollect(stack);
  const funded = await stack.client.fund(buyer, id);
  assert.is(funded.status, 200, JSON.stringify(funded.body));
  const ops = await operationsFor(stack, key);
  assert.is(ops.length, 1);
  assert.is(funded.body.pact.parties[1]?.receipt, ops[0]!.ref);
  await stack.advanceClock(0);
  assert.is((await operationsFor(stack, key)).length, 1, 'a recorded collect is not reversed');
});

test('a lost collect is paid back once the pact can no longer record it', async ({ stack }) => {
  const { buyer, id, key } = await pactWithLostCollect(stack);
  const before = BigInt((await stack.ledger()).balances[buyer.party]!);
  await stack.advanceClock(0);
  assert.is((await operationsFor(stack, key)).length, 1, 'still open: the buyer may retry until fundBy');
  await stack.advanceClock(24 * HOUR);
  assert.is((await stack.client.get(id)).body.pact.state, 'CANCELLED');
  const ops = await operationsFor(stack, key);
  assert.equal(ops.map((op) => [op.kind, op.amount, op.to]), [['collect', BUYER_OWES, 'mock:escrow'], ['payout', BUYER_OWES, buyer.party]]);
  assert.is(BigInt((await stack.ledger()).balances[buyer.party]!), before + BigInt(BUYER_OWES));
  await stack.advanceClock(0);
  assert.is((await operationsFor(stack, key)).length, 2, 'paid back once');
});

test.run();
