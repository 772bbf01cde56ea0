import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact } from '../../machines/pact/types.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

const HOUR = 3_600_000;
const test = suite<{ stack: Stack }>('lifecycles over HTTP');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

async function activePact(stack: Stack, spec = tradeSpec) {
  const { seller, buyer } = newParties();
  const created = await stack.client.create(seller, spec(seller, buyer));
  assert.is(created.status, 200, JSON.stringify(created.body));
  const id = created.body.pact.id;
  assert.is((await stack.client.fund(seller, id)).status, 200);
  const funded = await stack.client.fund(buyer, id);
  assert.is(funded.status, 200, JSON.stringify(funded.body));
  assert.is(funded.body.pact.state, 'ACTIVE');
  return { seller, buyer, id };
}

const amountsOf = (pact: Pact) =>
  Object.fromEntries(pact.payouts.map((p) => [`${p.kind}:${p.party === pact.proposer ? 'seller' : p.party === pact.arbitrationFeeRecipient ? 'fee' : 'buyer'}`, p.amount]));

test('cosign: propose, cosign, paid out as proposed with bonds back', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  const distribution = [{ party: seller.party, bp: 7000 }, { party: buyer.party, bp: 3000 }];
  const proposed = await stack.client.propose(seller, id, { evidence: [{ note: 'delivered' }], distribution });
  assert.is(proposed.status, 200, JSON.stringify(proposed.body));
  assert.is(proposed.body.pact.state, 'PROPOSED');
  const settled = await stack.client.cosign(buyer, id);
  assert.is(settled.body.pact.state, 'SETTLED');
  const pact = await stack.settledPayouts(id);
  // pot 1001: 700.7 → 700 (+1 by largest remainder: .7 > .3), 300.3 → 300
  assert.equal(amountsOf(pact), { 'pot:seller': '701', 'pot:buyer': '300', 'bond:seller': '50', 'bond:buyer': '75' });
  assert.is(pact.settlement?.outcome, 'settled_by_cosign');
});

test('silence: after objectBy a poke settles as proposed', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  await stack.client.propose(seller, id, { evidence: [{ url: 'https://example.org/out' }], distribution: [{ party: seller.party, bp: 10000 }] });
  assert.is((await stack.client.poke(id)).body.pact.state, 'PROPOSED');
  await stack.advanceClock(72 * HOUR);
  const pact = (await stack.client.get(id)).body.pact;
  assert.is(pact.state, 'SETTLED');
  assert.is(pact.settlement.outcome, 'settled_by_silence');
  assert.equal(amountsOf(await stack.settledPayouts(id)), { 'pot:seller': '1001', 'bond:seller': '50', 'bond:buyer': '75' });
  void buyer;
});

test.run();
