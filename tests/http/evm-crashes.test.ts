import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact } from '../../machines/pact/types.js';
import type { KeyPair } from '../../protocol/sign.js';
import { balancesOf, startEvmStack, type EvmStack, type TestWallet } from '../support/evm-chain.js';
import { asPaymentHeader, payV2 } from '../support/evm/x402-payments.js';
import type { Stack } from '../support/stack.js';
import { railPact } from '../support/trades.js';

// kill -9 at the escrow wallet's crash points (runtime/crash-points.ts), then a restart: a collect recorded but
// never sent, or sent but never told, is settled once when the payer retries with the same proof, or paid back
// when the pact moves on without it; a payout interrupted either way is paid exactly once.

const DAY = 24 * 3_600_000;
const test = suite<EvmStack>('EVM rails through kill -9');

test.before(async (context) => {
  Object.assign(context, await startEvmStack({ payers: 5 }));
});
test.after(async (context) => {
  await context.stop();
});

/** The x402 rail's solvency once its balance and liabilities agree (or the last seen after 10 s). */
async function settledSolvency(stack: Stack): Promise<{ ok: boolean; balance: string; liabilities: string }> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { solvency } = (await stack.client.request('GET', '/health')).body.paymentRails.x402;
    if (solvency.balance === solvency.liabilities || Date.now() > deadline) return solvency;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}



/** A proof for `key`'s funding of `id`, paid by `payer` (v2, base64), made from the pact's 402. */
async function proofFor(stack: Stack, key: KeyPair, id: string, payer: TestWallet): Promise<string> {
  const quote = await stack.client.request('POST', `/pacts/${id}/fund`, stack.client.signedCall(key, 'pacts.fund', id, await stack.client.nonceOf(id), {}));
  assert.is(quote.status, 402, JSON.stringify(quote.body));
  return asPaymentHeader(await payV2(payer, quote.body.requirement.railData.accepts[0]));
}

/** The paid fund call, met by a crash at `point`; the service is started again unarmed. */
async function fundThroughCrash(stack: Stack, key: KeyPair, id: string, proof: string, point: string) {
  const call = stack.client.signedCall(key, 'pacts.fund', id, await stack.client.nonceOf(id), {});
  await stack.crashDuring(point, () => stack.client.request('POST', `/pacts/${id}/fund`, call, { 'x-payment': proof }));
}

for (const point of ['collect-recorded', 'collect-broadcast']) {
  test(`${point}: the payer retries with the same proof, is funded, and pays once`, async ({ chain, stack }) => {
    const payer = chain.payers[point === 'collect-recorded' ? 0 : 1]!;
    const { buyer, id } = await railPact(stack, 'x402');
    const proof = await proofFor(stack, buyer, id, payer);
    const before = await chain.balanceOf(payer.address);
    await fundThroughCrash(stack, buyer, id, proof, point);
    const retried = await stack.client.fundWith(buyer, id, async () => proof);
    assert.is(retried.status, 200, JSON.stringify(retried.body));
    assert.ok((retried.body.pact as Pact).parties.find((p) => p.party === buyer.party)!.confirmed);
    assert.is(await chain.balanceOf(payer.address), before - 1076n);
  });
}

test('collect-broadcast, and the payer never comes back: once the pact is cancelled, the money goes back', async ({ chain, stack }) => {
  const payer = chain.payers[2]!;
  const { buyer, id } = await railPact(stack, 'x402');
  const proof = await proofFor(stack, buyer, id, payer);
  const before = await chain.balanceOf(payer.address);
  await fundThroughCrash(stack, buyer, id, proof, 'collect-broadcast');
  assert.is(await chain.balanceOf(payer.address), before - 1076n); // collected, recorded nowhere on the pact
  await stack.advanceClock(2 * DAY); // past fundBy: cancelled; the reconciler pays the orphaned collect back
  assert.is(((await stack.client.get(id)).body.pact as Pact).state, 'CANCELLED');
  assert.is(await chain.balanceOf(payer.address), before);
});

for (const point of ['payout-recorded', 'payout-broadcast']) {
  test(`${point}: after the restart every payout is paid exactly once and escrow keeps what it still owes`, async ({ chain, stack }) => {
    const [buyerWallet, sellerWallet] = point === 'payout-recorded' ? [chain.payers[3]!, chain.payers[4]!] : [chain.payers[4]!, chain.payers[3]!];
    const { seller, buyer, id } = await railPact(stack, 'x402');
    for (const [key, wallet] of [[buyer, buyerWallet], [seller, sellerWallet]] as const) {
      const proof = await proofFor(stack, key, id, wallet);
      const call = stack.client.signedCall(key, 'pacts.fund', id, await stack.client.nonceOf(id), {});
      assert.is((await stack.client.request('POST', `/pacts/${id}/fund`, call, { 'x-payment': proof })).status, 200);
    }
    const funded = await balancesOf(chain, buyerWallet, sellerWallet, chain.escrow);
    await stack.client.propose(seller, id, { evidence: [{ note: 'delivered' }], distribution: [{ party: seller.party, bp: 10000 }] });

    await stack.restartWith({ PACT_TEST_CRASH_AT: point });
    await stack.client.cosign(buyer, id).catch(() => undefined); // the crash may come before or after the answer
    await stack.exited();
    await stack.restartWith({ PACT_TEST_CRASH_AT: '' });

    const pact = await stack.settledPayouts(id, 30_000);
    assert.equal(pact.payouts.map((p) => [p.kind, p.amount]).sort(), [['bond', '50'], ['bond', '75'], ['pot', '1001']]);
    // the seller gets the pot and its bond, the buyer its bond; escrow no longer holds anything of this pact
    assert.equal(await balancesOf(chain, buyerWallet, sellerWallet, chain.escrow), [funded[0]! + 75n, funded[1]! + 1051n, funded[2]! - 1126n]);
    // every pact of this suite is paid out or paid back: escrow holds exactly what it owes (health is judged every 2 s)
    const solvency = await settledSolvency(stack);
    assert.is(solvency.ok, true);
    assert.is(solvency.balance, solvency.liabilities);
  });
}

test.run();
