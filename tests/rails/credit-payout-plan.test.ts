import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { planPayouts, type Owed, type Source } from '../../rails/credit/payout-plan.js';

// How the credit rail pays a transition out of the parties' holds: own share first, then from the others in order.

const test = suite('credit payout plan');

const source = (party: string, amount: number): Source => ({ party, reservationId: `rsv_${party}`, amount: BigInt(amount) });
const owed = (party: string, kind: string, amount: number): Owed => ({ key: `p:settle.5:${kind}:${party}`, party, amount: BigInt(amount) });
const creditsOf = (plan: ReturnType<typeof planPayouts>) => plan.sources.map((s) => [s.source.party, Object.fromEntries([...s.credits].map(([p, a]) => [p, Number(a)]))]);

test('the seller takes the pot: with the bonds first, each bond stays with its payer and the buyer hold pays the pot', () => {
  const plan = planPayouts([source('seller', 50), source('buyer', 1076)], [owed('seller', 'bond', 50), owed('buyer', 'bond', 75), owed('seller', 'pot', 1001)]);
  assert.equal(creditsOf(plan), [['seller', {}], ['buyer', { seller: 1001 }]]);
  assert.equal(plan.paidFrom.get('p:settle.5:pot:seller'), ['rsv_buyer']);
  assert.equal(plan.paidFrom.get('p:settle.5:bond:seller'), ['rsv_seller']);
  assert.equal(plan.paidFrom.get('p:settle.5:bond:buyer'), ['rsv_buyer']);
});

test('a refund moves nothing: every payout is its own party’s', () => {
  const plan = planPayouts([source('a', 100), source('b', 200)], [owed('a', 'deposit', 60), owed('a', 'bond', 40), owed('b', 'deposit', 200)]);
  assert.equal(creditsOf(plan), [['a', {}], ['b', {}]]);
});

test('a fee to a party with no hold, and a split pot: drawn from the holds in order, across two when one runs out', () => {
  const plan = planPayouts(
    [source('a', 100), source('b', 100)],
    [owed('a', 'pot', 30), owed('b', 'pot', 150), owed('server', 'fee', 20)],
  );
  assert.equal(creditsOf(plan), [['a', { b: 50, server: 20 }], ['b', {}]]);
  assert.equal(plan.paidFrom.get('p:settle.5:pot:b'), ['rsv_b', 'rsv_a']);
  const debits = plan.sources.map((s) => [...s.credits.values()].reduce((x, y) => x + y, 0n));
  assert.equal(debits, [70n, 0n]);
});

test('holds and payouts that do not add up are refused', () => {
  assert.throws(() => planPayouts([source('a', 100)], [owed('a', 'deposit', 99)]), /add up/);
});

test.run();
