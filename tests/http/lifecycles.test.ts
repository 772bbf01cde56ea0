import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact } from '../../machines/pact/types.js';
import { activePact, buyerFundedPact, disputedPact } from '../support/trades.js';
import { runAudit } from '../support/audit.js';
import { Stack } from '../support/stack.js';

const HOUR = 3_600_000;
const test = suite<{ stack: Stack }>('lifecycles over HTTP');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

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
  assert.is(pact.settlement?.outcome, 'settled_by_silence');
  assert.equal(amountsOf(await stack.settledPayouts(id)), { 'pot:seller': '1001', 'bond:seller': '50', 'bond:buyer': '75' });
  void buyer;
});


test('dispute upheld: the verdict redistributes and the proposer forfeits its bond as the fee', async ({ stack }) => {
  const { seller, buyer, id, inputHash } = await disputedPact(stack);
  const shares = [{ party: seller.party, bp: 2500 }, { party: buyer.party, bp: 7500 }];
  const settled = await stack.client.verdict(stack.evaluator, id, inputHash, shares, 'proposer', 'too long');
  assert.is(settled.status, 200, JSON.stringify(settled.body));
  assert.is(settled.body.pact.state, 'SETTLED');
  // pot 1001: 250.25 → 250, 750.75 → 750, the leftover unit to the larger remainder (buyer)
  assert.equal(amountsOf(await stack.settledPayouts(id)), { 'pot:seller': '250', 'pot:buyer': '751', 'bond:buyer': '75', 'fee:fee': '50' });
});

test('dispute rejected: the objector forfeits its bond', async ({ stack }) => {
  const { seller, id, inputHash } = await disputedPact(stack);
  await stack.client.verdict(stack.evaluator, id, inputHash, [{ party: seller.party, bp: 10000 }], 'objector');
  assert.equal(amountsOf(await stack.settledPayouts(id)), { 'pot:seller': '1001', 'bond:seller': '50', 'fee:fee': '75' });
});

test('dispute split: each side forfeits half its bond, an odd unit goes back', async ({ stack }) => {
  const { seller, buyer, id, inputHash } = await disputedPact(stack);
  await stack.client.verdict(stack.evaluator, id, inputHash, [{ party: seller.party, bp: 5000 }, { party: buyer.party, bp: 5000 }], 'split');
  // bonds 50 and 75: forfeits 25 and 37, returns 25 and 38
  assert.equal(amountsOf(await stack.settledPayouts(id)), {
    'pot:seller': '501', 'pot:buyer': '500', 'bond:seller': '25', 'bond:buyer': '38', 'fee:fee': '62',
  });
});

const FULL_REFUND = { 'deposit:buyer': '1001', 'bond:seller': '50', 'bond:buyer': '75' };

/** Lets `ms` pass (the keeper pokes what is due) and checks the pact was cancelled with these refunds. */
async function assertCancelledAfter(stack: Stack, id: string, ms: number, outcome: string, refunds: Record<string, string>) {
  await stack.advanceClock(ms);
  const pact = (await stack.client.get(id)).body.pact;
  assert.is(pact.state, 'CANCELLED');
  assert.is(pact.settlement?.outcome, outcome);
  assert.equal(amountsOf(await stack.settledPayouts(id)), refunds);
}

test('verdict deadline: without a verdict everyone is refunded', async ({ stack }) => {
  const { id } = await disputedPact(stack);
  await assertCancelledAfter(stack, id, 24 * HOUR, 'cancelled_verdict_deadline', FULL_REFUND);
});

test('missed fund deadline: cancelled, the party that funded is refunded', async ({ stack }) => {
  const { id } = await buyerFundedPact(stack);
  await assertCancelledAfter(stack, id, 24 * HOUR, 'cancelled_fund_deadline', { 'deposit:buyer': '1001', 'bond:buyer': '75' });
});

test('missed perform deadline: cancelled with a full refund', async ({ stack }) => {
  const { id } = await activePact(stack);
  await assertCancelledAfter(stack, id, 168 * HOUR, 'cancelled_perform_deadline', FULL_REFUND);
});

test('withdraw: before activation the depositor gets deposit and bond back and may fund again', async ({ stack }) => {
  const { buyer, id } = await buyerFundedPact(stack);
  const withdrawn = await stack.client.withdraw(buyer, id);
  assert.is(withdrawn.status, 200, JSON.stringify(withdrawn.body));
  assert.is(withdrawn.body.pact.state, 'CREATED');
  assert.is(withdrawn.body.pact.parties[1]?.confirmed, false);
  const refunded = await stack.settledPayouts(id);
  assert.equal(amountsOf(refunded), { 'deposit:buyer': '1001', 'bond:buyer': '75' });
  const again = await stack.client.fund(buyer, id);
  assert.is(again.status, 200, JSON.stringify(again.body));
  const collects = (await stack.ledger()).operations.filter((op) => op.kind === 'collect' && op.key.startsWith(`${id}:`));
  assert.is(collects.length, 2, 'a second funding round collects again under a new key');
});

test('mutual cancel: with every party’s approval, everyone is refunded', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  const cancelled = await stack.client.cancel(seller, id, [buyer], stack.now + HOUR);
  assert.is(cancelled.status, 200, JSON.stringify(cancelled.body));
  assert.is(cancelled.body.pact.state, 'CANCELLED');
  assert.is(cancelled.body.pact.settlement?.outcome, 'cancelled_mutual');
  assert.equal(amountsOf(await stack.settledPayouts(id)), FULL_REFUND);
});

test('a failed payout is retried and paid exactly once', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  await stack.mockRail({ failNext: 'release' });
  await stack.client.propose(seller, id, { evidence: [], distribution: [{ party: seller.party, bp: 10000 }] });
  await stack.client.cosign(buyer, id);
  const pact = await stack.settledPayouts(id);
  const payouts = (await stack.ledger()).operations.filter((op) => op.kind === 'payout' && op.key.startsWith(`${id}:`));
  assert.is(payouts.length, pact.payouts.length);
  assert.is(new Set(payouts.map((op) => op.key)).size, payouts.length);
});

test('money adds up: escrow holds exactly what the pacts still owe, to the minor unit', async ({ stack }) => {
  await stack.payoutsIdle();
  const listed = (await stack.client.list({ limit: 200 })).body.pacts;
  const pacts = await Promise.all(listed.map(async (summary) => (await stack.client.get(summary.id)).body.pact as Pact));
  const open = pacts.filter((pact) => pact.state !== 'SETTLED' && pact.state !== 'CANCELLED');
  const heldForOpen = open.flatMap((pact) => pact.parties).reduce((sum, p) => sum + BigInt(p.paidPot) + BigInt(p.paidBond), 0n);
  const owed = pacts.flatMap((pact) => pact.payouts).filter((p) => p.status === 'pending').reduce((sum, p) => sum + BigInt(p.amount), 0n);
  const ledger = await stack.ledger();
  const total = (kind: string) => ledger.operations.filter((op) => op.kind === kind).reduce((sum, op) => sum + BigInt(op.amount), 0n);
  assert.ok(pacts.length >= 10);
  assert.is(BigInt(ledger.balances['mock:escrow'] ?? '0'), total('collect') - total('payout'));
  assert.is(total('collect') - total('payout'), heldForOpen + owed);
});

test('the audit re-verifies every signature of every journal entry above', async ({ stack }) => {
  await stack.payoutsIdle();
  const { code, output } = await runAudit(stack.natsUrl, '--all');
  assert.is(code, 0, output);
  const [, pacts, entries, signatures, failed] = /(\d+) pacts, (\d+) entries, (\d+) signatures verified, (\d+) pacts failed/.exec(output)!.map(Number);
  assert.ok(pacts! >= 10 && entries! > pacts! && signatures! > pacts!, output);
  assert.is(failed, 0);
});

test.run();
