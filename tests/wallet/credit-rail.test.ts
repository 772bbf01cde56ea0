import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { PactSpec } from '../../machines/pact/spec.js';
import type { KeyPair } from '../../protocol/sign.js';
import { creditPact, creditSpec, fundFromCredit as fund, holder, less, more, ONE, TEN, walletOf } from '../support/credit.js';
import { newParties } from '../support/parties.js';
import { Stack } from '../support/stack.js';
import { usd, walletCall } from '../support/wallet-client.js';

// Pacts funded from wallet credit (WALLET-DECISIONS.md, "Points settled for the credit rail"): a party binds its
// wallet with the wallet's bearer, funds with X-PAYMENT {scheme: credit, walletId} and the same bearer; its deposit
// and bond are held on its wallet; SETTLED credits the payees' wallets, refunds and withdrawals release the hold.

const test = suite<{ stack: Stack }>('the credit rail');
test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack?.stop();
});

test('a pact funded from credit runs to settlement: the payee wallet is credited, the holds are gone', async ({ stack }) => {
  const { seller, buyer, id } = await creditPact(stack);
  const quote = await stack.client.request('POST', `/pacts/${id}/fund`, stack.client.signedCall(buyer.key, 'pacts.fund', id, await stack.client.nonceOf(id), {}));
  assert.is(quote.status, 402);
  assert.equal(quote.body.requirement.rail, 'credit');
  assert.equal([quote.body.requirement.railData.scheme, quote.body.requirement.railData.walletId], ['credit', buyer.walletId]);
  assert.match(quote.body.requirement.railData.payWith, /Bearer/);
  assert.equal(quote.body.requirement.amount, usd(1076));

  assert.is((await fund(stack, buyer, id)).status, 200);
  assert.equal(await walletOf(stack, buyer), { balance: TEN, held: '1076', available: less(1076) }, 'deposit and bond held on the buyer wallet');
  const active = await fund(stack, seller, id);
  assert.is(active.status, 200, JSON.stringify(active.body));
  assert.is(active.body.pact.state, 'ACTIVE');
  assert.equal(await walletOf(stack, seller), { balance: TEN, held: '50', available: less(50) });

  assert.is((await stack.client.propose(seller.key, id, { evidence: [{ note: 'done' }], distribution: [{ party: seller.key.party, bp: 10000 }] })).status, 200);
  const settled = await stack.client.cosign(buyer.key, id);
  assert.is(settled.body.pact.state, 'SETTLED');
  const pact = await stack.settledPayouts(id);
  assert.ok(pact.payouts.every((p) => p.railRef !== null));

  assert.equal(await walletOf(stack, seller), { balance: more(1001), held: '0', available: more(1001) }, 'the pot credited, the bond back');
  assert.equal(await walletOf(stack, buyer), { balance: less(1001), held: '0', available: less(1001) }, 'the deposit debited, the bond back');
  const ledger = (await walletCall(stack, 'GET', '/v1/me', undefined, seller.auth)).body.ledger;
  assert.ok(JSON.stringify(ledger).includes('credit'), JSON.stringify(ledger));
});

test('a verdict that upholds the proposal pays the objector bond as the fee into the server wallet', async ({ stack }) => {
  const { seller, buyer, id } = await creditPact(stack);
  for (const party of [buyer, seller]) assert.is((await fund(stack, party, id)).status, 200);
  await stack.client.propose(seller.key, id, { evidence: [{ note: 'done' }], distribution: [{ party: seller.key.party, bp: 10000 }] });
  const disputed = await stack.client.object(buyer.key, id, 'the summary is 900 words');
  assert.is(disputed.body.pact?.state, 'DISPUTED', JSON.stringify(disputed.body));
  const shares = [{ party: seller.key.party, bp: 10000 }];
  const settled = await stack.client.verdict(stack.evaluator, id, disputed.body.pact.inputHash!, shares, 'objector');
  assert.is(settled.body.pact?.state, 'SETTLED', JSON.stringify(settled.body));
  const pact = await stack.settledPayouts(id);
  const fee = pact.payouts.find((p) => p.kind === 'fee')!;
  assert.equal([fee.party, fee.amount], [pact.arbitrationFeeRecipient, '75']);
  // the seller takes the pot, the buyer (who objected) loses its bond of 75 to the fee
  assert.equal(await walletOf(stack, seller), { balance: more(1001), held: '0', available: more(1001) });
  assert.equal(await walletOf(stack, buyer), { balance: less(1001 + 75), held: '0', available: less(1001 + 75) });
  const feeToken = readFileSync(join(stack.dataDir, 'keys', 'fee-wallet.token'), 'utf8').trim();
  const fees = await walletCall(stack, 'GET', '/v1/me', undefined, { authorization: `Bearer ${feeToken}` });
  assert.is(fees.body.wallet.balance.amount, '75', 'the server wallet (its token kept for the operator) holds the fee');
});

test('refunds release the holds: a withdrawal, then a mutual cancel after funding again', async ({ stack }) => {
  const { seller, buyer, id } = await creditPact(stack);
  assert.is((await fund(stack, buyer, id)).status, 200);
  assert.is((await stack.client.withdraw(buyer.key, id)).status, 200);
  await stack.settledPayouts(id);
  assert.equal(await walletOf(stack, buyer), { balance: TEN, held: '0', available: TEN }, 'the withdrawal released the hold');

  assert.is((await fund(stack, buyer, id)).status, 200, 'a second round holds again');
  assert.equal(await walletOf(stack, buyer), { balance: TEN, held: '1076', available: less(1076) });
  assert.is((await fund(stack, seller, id)).body.pact.state, 'ACTIVE');
  const cancelled = await stack.client.cancel(seller.key, id, [seller.key, buyer.key], Date.now() + 60_000);
  assert.is(cancelled.body.pact.state, 'CANCELLED', JSON.stringify(cancelled.body));
  const pact = await stack.settledPayouts(id);
  assert.ok(pact.payouts.every((p) => p.status === 'paid'));
  assert.equal(await walletOf(stack, buyer), { balance: TEN, held: '0', available: TEN });
  assert.equal(await walletOf(stack, seller), { balance: TEN, held: '0', available: TEN });
});

test('binding needs the wallet bearer; the first wallet bound stays', async ({ stack }) => {
  const { seller: key } = newParties();
  const mine = await holder(stack, key, '0', false);
  const other = await holder(stack, newParties().buyer, '0', false);
  const bind = (auth: Record<string, string>) =>
    stack.client.request('POST', '/rails/credit/address', stack.client.signedCall(key, 'rails.bindAddress', '', 0, { rail: 'credit', address: mine.walletId }), auth);
  assert.is((await bind({})).status, 403, 'no bearer');
  assert.is((await bind(other.auth)).status, 403, "another wallet's bearer");
  assert.is((await bind({ authorization: 'Bearer wk_nonsense' })).status, 403, 'an unknown bearer');
  assert.is((await bind(mine.auth)).status, 200);
  const second = await stack.client.bindWallet(key, other.walletId, other.token);
  assert.is(second.status, 409);
  assert.is(second.body.error, 'address_already_bound');
  const notWallet = await stack.client.request('POST', '/rails/credit/address', stack.client.signedCall(key, 'rails.bindAddress', '', 0, { rail: 'credit', address: 'mock-account' }), mine.auth);
  assert.is(notWallet.status, 400);
});

test('refused funds change nothing: no bearer, another wallet, not enough credit, no binding', async ({ stack }) => {
  const { seller, buyer, id } = await creditPact(stack);
  const stranger = await holder(stack, newParties().buyer, ONE);
  const nonce = await stack.client.nonceOf(id);
  const paid = (key: KeyPair, walletId: string, auth: Record<string, string>) =>
    stack.client.request('POST', `/pacts/${id}/fund`, stack.client.signedCall(key, 'pacts.fund', id, nonce, {}), { 'x-payment': JSON.stringify({ scheme: 'credit', walletId }), ...auth });

  const noBearer = await paid(buyer.key, buyer.walletId, {});
  assert.is(noBearer.status, 403, JSON.stringify(noBearer.body));
  const proof = JSON.stringify({ scheme: 'credit', walletId: buyer.walletId });
  const otherHeader = await stack.client.request('POST', `/pacts/${id}/fund`, stack.client.signedCall(buyer.key, 'pacts.fund', id, nonce, {}), { 'payment-signature': proof });
  assert.is(otherHeader.status, 403, 'x402 v2 header, no bearer');
  const base64 = await stack.client.request('POST', `/pacts/${id}/fund`, stack.client.signedCall(buyer.key, 'pacts.fund', id, nonce, {}), { 'x-payment': Buffer.from(proof).toString('base64') });
  assert.is(base64.status, 403, 'base64 JSON, no bearer');
  const wrongWallet = await paid(buyer.key, stranger.walletId, stranger.auth);
  assert.is(wrongWallet.status, 402);
  assert.is(wrongWallet.body.reason, 'wrong_payer');

  const poor = await holder(stack, newParties().buyer, '0');
  const poorPact = await stack.client.create(seller.key, creditSpec(seller.key, poor.key));
  const short = await fund(stack, poor, poorPact.body.pact.id);
  assert.is(short.status, 402);
  assert.is(short.body.reason, 'insufficient_funds');
  assert.equal(await walletOf(stack, poor), { balance: '0', held: '0', available: '0' });

  const unbound = await holder(stack, newParties().buyer, ONE, false);
  const unboundPact = await stack.client.create(seller.key, creditSpec(seller.key, unbound.key));
  const unboundId = unboundPact.body.pact.id;
  const quote = await stack.client.request('POST', `/pacts/${unboundId}/fund`, stack.client.signedCall(unbound.key, 'pacts.fund', unboundId, 0, {}));
  assert.is(quote.status, 402);
  assert.is(quote.body.requirement.railData.walletId, null, 'the 402 says no wallet is bound yet');
  const refused = await fund(stack, unbound, unboundId);
  assert.is(refused.status, 402);
  assert.is(refused.body.reason, 'wrong_payer');
  assert.equal(await walletOf(stack, unbound), { balance: ONE, held: '0', available: ONE });

  const pact = (await stack.client.get(id)).body.pact;
  assert.ok(pact.parties.every((p: { confirmed: boolean }) => !p.confirmed), 'nobody funded');
  assert.equal(await walletOf(stack, buyer), { balance: TEN, held: '0', available: TEN });
});

test('ten payers, one payee: the pot comes from ten holds and every payout is recorded', async ({ stack }) => {
  const seller = await holder(stack, newParties().seller, '0');
  const buyers = await Promise.all(Array.from({ length: 10 }, () => holder(stack, newParties().buyer, ONE)));
  const spec: PactSpec = {
    rail: 'credit',
    parties: [seller, ...buyers].map((p, i) => ({ party: p.key.party, deposit: usd(i === 0 ? 0 : 1000), bond: usd(0), required: true })),
    proposer: seller.key.party,
    terms: { spec: 'ten buyers, one summary' },
    minParties: 11,
  };
  const id = (await stack.client.create(seller.key, spec)).body.pact.id as string;
  for (const party of [seller, ...buyers]) assert.is((await fund(stack, party, id)).status, 200);
  await stack.client.propose(seller.key, id, { evidence: [{ note: 'done' }], distribution: [{ party: seller.key.party, bp: 10000 }] });
  for (const buyer of buyers) await stack.client.cosign(buyer.key, id);
  const pact = await stack.settledPayouts(id);
  assert.equal(pact.payouts.map((p) => [p.kind, p.amount]), [['pot', '10000']]);
  assert.equal(await walletOf(stack, seller), { balance: '10000', held: '0', available: '10000' });
  for (const buyer of buyers) assert.equal(await walletOf(stack, buyer), { balance: (BigInt(ONE) - 1000n).toString(), held: '0', available: (BigInt(ONE) - 1000n).toString() });
});

test('a refused fund holds nothing later: the reconciler leaves it alone after a top-up', async ({ stack }) => {
  const { seller } = await creditPact(stack);
  const poor = await holder(stack, newParties().buyer, '0');
  const id = (await stack.client.create(seller.key, creditSpec(seller.key, poor.key))).body.pact.id as string;
  assert.is((await fund(stack, poor, id)).body.reason, 'insufficient_funds');
  const { checkout } = (await walletCall(stack, 'POST', '/v1/checkout', { amount: usd(ONE) }, poor.auth)).body;
  assert.is((await walletCall(stack, 'POST', `${new URL(checkout.url).pathname}/pay`, 'rail=mock')).status, 200);
  await stack.advanceClock(1_000); // runs the reconciler
  assert.equal(await walletOf(stack, poor), { balance: ONE, held: '0', available: ONE });
  assert.is((await fund(stack, poor, id)).status, 200, 'funding again after the top-up holds once');
  assert.equal(await walletOf(stack, poor), { balance: ONE, held: '1076', available: (BigInt(ONE) - 1076n).toString() });
});

test('a credit pact holds USD only', async ({ stack }) => {
  const { seller, buyer } = newParties();
  const spec = creditSpec(seller, buyer);
  const created = await stack.client.create(seller, { ...spec, parties: spec.parties.map((p) => ({ ...p, deposit: { ...p.deposit, asset: 'USDC' }, bond: { ...p.bond, asset: 'USDC' } })) });
  assert.is(created.status, 400, JSON.stringify(created.body));
});

test.run();
