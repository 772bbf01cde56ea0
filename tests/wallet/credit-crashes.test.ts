import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact } from '../../machines/pact/types.js';
import { creditPact, fundFromCredit, less, more, TEN, walletOf, type Holder } from '../support/credit.js';
import { Stack } from '../support/stack.js';

// kill -9 at the credit rail's crash points (runtime/crash-points.ts), then a restart: a fund whose hold was asked
// for, or made, but never told to the pact holds once when the payer retries, and is released when the pact moves
// on without it; a settle whose payout was never recorded is applied once.

const DAY = 24 * 3_600_000;
const test = suite<{ stack: Stack }>('the credit rail through kill -9');
test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack?.stop();
});

/** The paid fund call, met by a crash at `point`; the service is started again unarmed. */
const fundThroughCrash = (stack: Stack, party: Holder, id: string, point: string) => stack.crashDuring(point, () => fundFromCredit(stack, party, id));

for (const point of ['credit-asked', 'credit-reserved']) {
  test(`${point}: the payer retries, is funded, and is held once`, async ({ stack }) => {
    const { buyer, id } = await creditPact(stack);
    await fundThroughCrash(stack, buyer, id, point);
    const retried = await fundFromCredit(stack, buyer, id);
    assert.is(retried.status, 200, JSON.stringify(retried.body));
    assert.ok((retried.body.pact as Pact).parties.find((p) => p.party === buyer.key.party)!.confirmed);
    assert.equal(await walletOf(stack, buyer), { balance: TEN, held: '1076', available: less(1076) });
  });
}

test('credit-reserved, and the payer never comes back: once the pact is cancelled, the hold is released', async ({ stack }) => {
  const { buyer, id } = await creditPact(stack);
  await fundThroughCrash(stack, buyer, id, 'credit-reserved');
  assert.equal(await walletOf(stack, buyer), { balance: TEN, held: '1076', available: less(1076) }, 'held, recorded nowhere on the pact');
  await stack.advanceClock(2 * DAY); // past fundBy: cancelled; the reconciler releases the orphaned hold
  assert.is(((await stack.client.get(id)).body.pact as Pact).state, 'CANCELLED');
  assert.equal(await walletOf(stack, buyer), { balance: TEN, held: '0', available: TEN });
});

test('credit-settled: after the restart each payout is paid once, and the wallets add up', async ({ stack }) => {
  const { seller, buyer, id } = await creditPact(stack);
  for (const party of [buyer, seller]) assert.is((await fundFromCredit(stack, party, id)).status, 200);
  await stack.client.propose(seller.key, id, { evidence: [{ note: 'delivered' }], distribution: [{ party: seller.key.party, bp: 10000 }] });

  await stack.restartWith({ PACT_TEST_CRASH_AT: 'credit-settled' });
  await stack.client.cosign(buyer.key, id).catch(() => undefined); // the crash may come before or after the answer
  await stack.exited();
  await stack.restartWith({ PACT_TEST_CRASH_AT: '' });

  const pact = await stack.settledPayouts(id, 30_000);
  assert.equal(pact.payouts.map((p) => [p.kind, p.amount]).sort(), [['bond', '50'], ['bond', '75'], ['pot', '1001']]);
  assert.equal(await walletOf(stack, seller), { balance: more(1001), held: '0', available: more(1001) });
  assert.equal(await walletOf(stack, buyer), { balance: less(1001), held: '0', available: less(1001) });
});

test.run();
