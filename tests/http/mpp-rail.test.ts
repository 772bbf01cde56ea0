import { Challenge, Credential, Receipt } from 'mppx';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mppPayer, PaymentRefused } from '../../client/evm-payers.js';
import type { HttpResult, Requirement } from '../../client/pact-client.js';
import type { Pact } from '../../machines/pact/types.js';
import type { KeyPair } from '../../protocol/sign.js';
import { balancesOf, startEvmStack, type EvmChain, type EvmStack, type TestWallet } from '../support/evm-chain.js';
import type { Stack } from '../support/stack.js';
import { railPact } from '../support/trades.js';

// The mpp rail end to end: the Payment authentication scheme (mppx's evm charge) over HTTP, settled into the
// escrow wallet on a local chain and paid out by token transfers to the payers' bound addresses.

const test = suite<EvmStack>('mpp rail over HTTP');

test.before(async (context) => {
  Object.assign(context, await startEvmStack({ payers: 5, mpp: true }));
});
test.after(async (context) => {
  await context.stop();
});

type Challenged = HttpResult<{ requirement: Requirement }>;


const payerOf = (wallet: TestWallet, budget = 10_000n) => mppPayer({ account: wallet.account, budget });
const path = (id: string) => `/pacts/${id}/fund`;

/** A fund call's body naming `railAddress`, its 402, and a credential answering it. */
async function challenged(stack: Stack, key: KeyPair, id: string, payer: TestWallet, railAddress = payer.address) {
  const body = JSON.stringify(stack.client.signedCall(key, 'pacts.fund', id, await stack.client.nonceOf(id), { railAddress }));
  const answer: Challenged = await stack.client.request('POST', path(id), body);
  assert.is(answer.status, 402, JSON.stringify(answer.body));
  return { body, answer, credential: await payerOf(payer)(answer) };
}

test('the 402 carries WWW-Authenticate: Payment (evm charge) and the requirement body', async ({ chain, stack }) => {
  const { buyer, id } = await railPact(stack, 'mpp');
  const { answer } = await challenged(stack, buyer, id, chain.payers[0]!);
  const challenge = Challenge.fromHeaders(answer.headers);
  assert.is(challenge.method, 'evm');
  assert.is(challenge.intent, 'charge');
  assert.is(challenge.realm, 'pact.test');
  assert.is((challenge.request as { amount: string }).amount, '1076');
  assert.is((challenge.request as { recipient: string }).recipient, chain.escrow.address);
  const { requirement } = answer.body;
  assert.equal(requirement.amount, { amount: '1076', asset: 'USDC' });
  assert.is(requirement.payTo, chain.escrow.address);
  assert.is((requirement.railData as { challengeId: string }).challengeId, challenge.id);
});

test('a trade funded with Payment credentials, settled, paid out to the bound payer addresses', async ({ chain, stack }) => {
  const [buyerWallet, sellerWallet] = [chain.payers[0]!, chain.payers[1]!];
  const before = await balancesOf(chain, buyerWallet, sellerWallet, chain.escrow);
  const { seller, buyer, id } = await railPact(stack, 'mpp');

  const funded = await stack.client.fundWithMpp(buyer, id, buyerWallet.address, payerOf(buyerWallet));
  assert.is(funded.status, 200, JSON.stringify(funded.body));
  const receipt = Receipt.deserialize(funded.headers.get('payment-receipt') ?? '');
  assert.is(receipt.status, 'success');
  assert.is(receipt.method, 'evm');
  assert.is((funded.body.pact as Pact).parties.find((p) => p.party === buyer.party)!.receipt, receipt.reference);
  const active = await stack.client.fundWithMpp(seller, id, sellerWallet.address, payerOf(sellerWallet));
  assert.is(active.status, 200, JSON.stringify(active.body));
  assert.is(active.body.pact.state, 'ACTIVE');

  // funding bound each payer as its party's mpp address: first write wins
  const rebind = await stack.client.bindAddress(buyer, 'mpp', chain.payers[4]!.address);
  assert.is(rebind.status, 409);
  assert.is(rebind.body.address, buyerWallet.address);

  await stack.client.propose(seller, id, { evidence: [{ note: 'delivered' }], distribution: [{ party: seller.party, bp: 10000 }] });
  assert.is((await stack.client.cosign(buyer, id)).body.pact.state, 'SETTLED');
  await stack.settledPayouts(id);
  // pot 1001 to the seller with its bond 50; the buyer's bond 75 back
  assert.equal(await balancesOf(chain, buyerWallet, sellerWallet, chain.escrow), [before[0]! - 1076n + 75n, before[1]! - 50n + 1051n, before[2]!]);
});

test('mpp needs call.railAddress: 400, nothing asked of the payer', async ({ stack }) => {
  const { buyer, id } = await railPact(stack, 'mpp');
  const refused = await stack.client.request('POST', path(id), stack.client.signedCall(buyer, 'pacts.fund', id, await stack.client.nonceOf(id), {}));
  assert.is(refused.status, 400);
  assert.is(refused.body.field, 'call.railAddress');
  assert.not.ok(refused.headers.get('www-authenticate'));
});

/** A refused paid retry: 402 with this reason, no token moved, the party not funded. */
async function assertRefused(chain: EvmChain, stack: Stack, key: KeyPair, id: string, payer: TestWallet, body: string, credential: string, reason: string) {
  const before = await balancesOf(chain, payer, chain.escrow);
  const refused = await stack.client.request('POST', path(id), body, { authorization: credential });
  assert.is(refused.status, 402, JSON.stringify(refused.body));
  assert.is(refused.body.error, 'payment_failed');
  assert.is(refused.body.reason, reason, refused.body.message);
  assert.equal(await balancesOf(chain, payer, chain.escrow), before);
  assert.not.ok(((await stack.client.get(id)).body.pact as Pact).parties.find((p) => p.party === key.party)!.confirmed);
}

test('a credential for another call, a re-signed call, a tampered challenge and another payer: clear 402s, nothing moves', async ({ chain, stack }) => {
  const payer = chain.payers[2]!;
  const { buyer, id } = await railPact(stack, 'mpp');
  const { body, credential } = await challenged(stack, buyer, id, payer);

  // the same credential with a re-signed body (rule 3: no re-signing)
  const resigned = JSON.stringify(stack.client.signedCall(buyer, 'pacts.fund', id, await stack.client.nonceOf(id), { railAddress: payer.address }));
  await assertRefused(chain, stack, buyer, id, payer, resigned, credential, 'invalid_proof');

  // on another pact
  const other = await railPact(stack, 'mpp');
  const otherBody = JSON.stringify(stack.client.signedCall(other.buyer, 'pacts.fund', other.id, await stack.client.nonceOf(other.id), { railAddress: payer.address }));
  await assertRefused(chain, stack, other.buyer, other.id, payer, otherBody, credential, 'invalid_proof');

  // the challenge altered to ask for less: its HMAC no longer matches
  const parsed = Credential.deserialize<Record<string, unknown>>(credential);
  const cheaper = Credential.serialize({ ...parsed, challenge: { ...parsed.challenge, request: { ...parsed.challenge.request, amount: '1' } } });
  await assertRefused(chain, stack, buyer, id, payer, body, cheaper, 'invalid_proof');

  // a payer other than the address the call names
  const stranger = chain.payers[3]!;
  const named = await challenged(stack, buyer, id, stranger, payer.address);
  await assertRefused(chain, stack, buyer, id, stranger, named.body, named.credential, 'wrong_payer');

  // a credential whose payload is null, or not an authorization
  for (const payload of [null, 'text', { type: 'authorization' }]) {
    await assertRefused(chain, stack, buyer, id, payer, body, Credential.serialize({ ...parsed, payload } as never), 'invalid_proof');
  }

  // not a credential at all
  await assertRefused(chain, stack, buyer, id, payer, body, 'Payment not-base64url!', 'invalid_proof');

  // the honest retry still pays, once; replayed, it pays nothing more
  const before = await chain.balanceOf(payer.address);
  const paid = await stack.client.request('POST', path(id), body, { authorization: credential });
  assert.is(paid.status, 200, JSON.stringify(paid.body));
  const replayed = await stack.client.request('POST', path(id), body, { authorization: credential });
  assert.is(replayed.status, 409);
  assert.is(await chain.balanceOf(payer.address), before - 1076n);
});

test('the payer keeps to its budget: a challenge beyond it is refused before anything is signed', async ({ chain, stack }) => {
  const { buyer, id } = await railPact(stack, 'mpp');
  const payer = chain.payers[4]!;
  const before = await chain.balanceOf(payer.address);
  await stack.client.fundWithMpp(buyer, id, payer.address, mppPayer({ account: payer.account, budget: 1_075n })).then(
    () => assert.unreachable('paid beyond the budget'),
    (error: unknown) => assert.instance(error, PaymentRefused),
  );
  assert.is(await chain.balanceOf(payer.address), before);
});

test('health reports full mpp readiness: live, solvent, gas, the evm charge method', async ({ stack }) => {
  const health = (await stack.client.request('GET', '/health')).body;
  assert.ok(health.rails.includes('mpp'));
  const mpp = health.paymentRails.mpp;
  assert.is(mpp.live, true);
  assert.is(mpp.solvency.ok, true);
  assert.is(mpp.payoutsReady, true);
  assert.is(mpp.method, 'evm');
  assert.is(mpp.intent, 'charge');
  assert.is(health.payoutReadiness.treasury.mpp, true);
});

test.run();
