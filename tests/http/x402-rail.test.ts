import { join } from 'node:path';
import type { PaymentRequirements } from '@x402/core/types';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { PaymentRefused, x402Payer } from '../../client/evm-payers.js';
import type { Pact } from '../../machines/pact/types.js';
import type { KeyPair } from '../../protocol/sign.js';
import { loadKey } from '../../runtime/keys.js';
import { balancesOf, evmRailEnv, startEvmStack, type EvmChain, type EvmStack, type TestWallet } from '../support/evm-chain.js';
import { testWallet } from '../support/evm/test-keys.js';
import { asPaymentHeader, payV1, payV2 } from '../support/evm/x402-payments.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';
import { railPact } from '../support/trades.js';

// The x402 rail end to end: pacts funded over HTTP with real EIP-3009 authorizations on a local chain,
// settled into the escrow wallet, and paid out by token transfers.

const test = suite<EvmStack>('x402 rail over HTTP');

test.before(async (context) => {
  Object.assign(context, await startEvmStack({ payers: 6 }));
});
test.after(async (context) => {
  await context.stop();
});

type Accepted = PaymentRequirements & { maxAmountRequired: string };


/** The proofless fund call's requirement entries: [v2 on eip155:84532, v1 on base-sepolia]. */
async function acceptsOf(stack: Stack, key: KeyPair, id: string): Promise<Accepted[]> {
  const quote = await stack.client.request('POST', `/pacts/${id}/fund`, stack.client.signedCall(key, 'pacts.fund', id, await stack.client.nonceOf(id), {}));
  assert.is(quote.status, 402, JSON.stringify(quote.body));
  return quote.body.requirement.railData.accepts;
}


/** Funds with a proof made from the 402's requirement by `pay`, sending it as the header text `encode` makes. */
function fundWith(stack: Stack, key: KeyPair, id: string, proof: unknown, encode: (proof: unknown) => string = asPaymentHeader) {
  return stack.client.fundWith(key, id, async () => encode(proof));
}


test('the 402 names the escrow and the token: accepts entries with amount and maxAmountRequired, v2 and v1 networks', async ({ chain, stack }) => {
  const { buyer, id } = await railPact(stack, 'x402');
  const accepts = await acceptsOf(stack, buyer, id);
  assert.equal(
    accepts.map((entry) => entry.network),
    ['eip155:84532', 'base-sepolia'],
  );
  for (const entry of accepts) {
    assert.is(entry.scheme, 'exact');
    assert.is(entry.amount, '1076');
    assert.is(entry.maxAmountRequired, '1076');
    assert.is(entry.payTo, chain.escrow.address);
    assert.is(entry.asset, chain.token.address);
    assert.equal(entry.extra, { name: 'USDC', version: '2' });
  }
  assert.is(((await stack.client.get(id)).body.pact as Pact).escrowAccount, chain.escrow.address);
});

test('a trade funded with a v2 payload (base64) and a v1 payload (JSON), settled by cosign, paid out on chain', async ({ chain, stack }) => {
  const [buyerWallet, sellerWallet] = [chain.payers[0]!, chain.payers[1]!];
  const before = await balancesOf(chain, buyerWallet, sellerWallet, chain.escrow);
  const { seller, buyer, id } = await railPact(stack, 'x402');

  const buyerProof = await payV2(buyerWallet, (await acceptsOf(stack, buyer, id))[0]!);
  const funded = await fundWith(stack, buyer, id, buyerProof);
  assert.is(funded.status, 200, JSON.stringify(funded.body));
  const response = JSON.parse(Buffer.from(funded.headers.get('x-payment-response') ?? '', 'base64').toString());
  assert.is(response.success, true);
  assert.is(response.payer, buyerWallet.address);
  assert.is(response.network, 'eip155:84532');
  const buyerReceipt = (funded.body.pact as Pact).parties.find((p) => p.party === buyer.party)!.receipt;
  assert.is(buyerReceipt, response.transaction);

  const sellerProof = await payV1(sellerWallet, (await acceptsOf(stack, seller, id))[1]! as never);
  const active = await fundWith(stack, seller, id, sellerProof, (proof) => JSON.stringify(proof));
  assert.is(active.status, 200, JSON.stringify(active.body));
  assert.is(active.body.pact.state, 'ACTIVE');
  assert.equal(await balancesOf(chain, buyerWallet, sellerWallet, chain.escrow), [before[0]! - 1076n, before[1]! - 50n, before[2]! + 1126n]);

  await stack.client.propose(seller, id, { evidence: [{ note: 'delivered' }], distribution: [{ party: seller.party, bp: 7000 }, { party: buyer.party, bp: 3000 }] });
  assert.is((await stack.client.cosign(buyer, id)).body.pact.state, 'SETTLED');
  const paid = await stack.settledPayouts(id);
  for (const payout of paid.payouts) assert.match(payout.railRef ?? '', /^0x[0-9a-f]{64}$/);
  // pot 1001 → seller 701, buyer 300; bonds back: seller 50, buyer 75; each to the address it paid from
  assert.equal(await balancesOf(chain, buyerWallet, sellerWallet, chain.escrow), [before[0]! - 1076n + 375n, before[1]! - 50n + 751n, before[2]!]);
});

test('a retry with the same proof after a lost answer pays nothing twice', async ({ chain, stack }) => {
  const payer = chain.payers[2]!;
  const { buyer, id } = await railPact(stack, 'x402');
  const proof = asPaymentHeader(await payV2(payer, (await acceptsOf(stack, buyer, id))[0]!));
  const call = stack.client.signedCall(buyer, 'pacts.fund', id, await stack.client.nonceOf(id), {});
  const before = await chain.balanceOf(payer.address);
  const first = await stack.client.request('POST', `/pacts/${id}/fund`, call, { 'x-payment': proof });
  assert.is(first.status, 200, JSON.stringify(first.body));
  // the answer was lost: the same call again finds the nonce moved on
  const again = await stack.client.request('POST', `/pacts/${id}/fund`, call, { 'x-payment': proof });
  assert.is(again.body.error, 'stateNonce_mismatch');
  // signed again on the current nonce with the same proof (spec rule 4; x402 v2's header name): already funded
  const resigned = stack.client.signedCall(buyer, 'pacts.fund', id, await stack.client.nonceOf(id), {});
  const third = await stack.client.request('POST', `/pacts/${id}/fund`, resigned, { 'payment-signature': proof });
  assert.is(third.status, 409);
  assert.is(third.body.error, 'already_funded');
  assert.is(await chain.balanceOf(payer.address), before - 1076n);
});

/** A refused paid call: its status and reason, and no token moved. */
async function assertRefused(chain: EvmChain, stack: Stack, key: KeyPair, id: string, payer: TestWallet, proof: unknown, reason: string) {
  const before = await balancesOf(chain, payer, chain.escrow);
  const refused = await fundWith(stack, key, id, proof);
  assert.is(refused.status, 402, JSON.stringify(refused.body));
  assert.is(refused.body.error, 'payment_failed');
  assert.is(refused.body.reason, reason, refused.body.message);
  assert.equal(await balancesOf(chain, payer, chain.escrow), before);
  assert.not.ok(((await stack.client.get(id)).body.pact as Pact).parties.find((p) => p.party === key.party)!.confirmed);
}

test('a proof already spent on another pact is refused: proof_already_used, nothing moves', async ({ chain, stack }) => {
  const payer = chain.payers[3]!;
  const first = await railPact(stack, 'x402');
  const proof = await payV2(payer, (await acceptsOf(stack, first.buyer, first.id))[0]!);
  assert.is((await fundWith(stack, first.buyer, first.id, proof)).status, 200);
  const second = await railPact(stack, 'x402');
  await acceptsOf(stack, second.buyer, second.id);
  await assertRefused(chain, stack, second.buyer, second.id, payer, proof, 'proof_already_used');
});

test('one proof sent to three pacts at once funds one of them; the others are proof_already_used, escrow takes it once', async ({ chain, stack }) => {
  const payer = chain.payers[3]!;
  const pacts = [await railPact(stack, 'x402'), await railPact(stack, 'x402'), await railPact(stack, 'x402')];
  const proof = asPaymentHeader(await payV2(payer, (await acceptsOf(stack, pacts[0]!.buyer, pacts[0]!.id))[0]!));
  const before = await balancesOf(chain, payer, chain.escrow);
  const answers = await Promise.all(
    pacts.map(async ({ buyer, id }) => {
      const call = stack.client.signedCall(buyer, 'pacts.fund', id, await stack.client.nonceOf(id), {});
      return stack.client.request('POST', `/pacts/${id}/fund`, call, { 'x-payment': proof });
    }),
  );
  assert.equal(answers.map((a) => a.status).sort(), [200, 402, 402], JSON.stringify(answers.map((a) => a.body)));
  for (const refused of answers.filter((a) => a.status === 402)) assert.is(refused.body.reason, 'proof_already_used');
  assert.equal(await balancesOf(chain, payer, chain.escrow), [before[0]! - 1076n, before[1]! + 1076n]);
});

test('tampered, underpaid, overpaid, wrong-recipient, expired and wrong-network proofs: clear 402s, nothing moves', async ({ chain, stack }) => {
  const payer = chain.payers[4]!;
  const { buyer, id } = await railPact(stack, 'x402');
  const [v2] = await acceptsOf(stack, buyer, id);
  const entry = v2!;

  const honest = await payV2(payer, entry);
  const tampered = structuredClone(honest);
  (tampered.payload as { signature: string }).signature = `0x${'11'.repeat(65)}`;
  await assertRefused(chain, stack, buyer, id, payer, tampered, 'invalid_proof');

  const signedForLess = await payV2(payer, { ...entry, amount: '1075' });
  const raised = structuredClone(signedForLess);
  (raised.payload as { authorization: { value: string } }).authorization.value = '1076';
  await assertRefused(chain, stack, buyer, id, payer, raised, 'invalid_proof');

  await assertRefused(chain, stack, buyer, id, payer, signedForLess, 'wrong_amount');
  await assertRefused(chain, stack, buyer, id, payer, await payV2(payer, { ...entry, amount: '1077' }), 'wrong_amount');
  await assertRefused(chain, stack, buyer, id, payer, await payV2(payer, { ...entry, payTo: chain.payers[5]!.address }), 'wrong_recipient');
  await assertRefused(chain, stack, buyer, id, payer, await payV2(payer, { ...entry, maxTimeoutSeconds: 2 }), 'expired');
  await assertRefused(chain, stack, buyer, id, payer, { ...honest, accepted: { ...entry, network: 'eip155:1' } }, 'wrong_network');
  await assertRefused(chain, stack, buyer, id, payer, { scheme: 'mock' }, 'invalid_proof');

  // the honest proof still pays
  assert.is((await fundWith(stack, buyer, id, honest)).status, 200);
});

test('a payer short of tokens: 402 insufficient_funds', async ({ chain, stack }) => {
  const broke = testWallet('holds 1000 units');
  await chain.mint(broke.address, 1_000n);
  const { buyer, id } = await railPact(stack, 'x402');
  await assertRefused(chain, stack, buyer, id, broke, await payV2(broke, (await acceptsOf(stack, buyer, id))[0]!), 'insufficient_funds');
});

test('the SDK payer pinned to a token and chain refuses a requirement naming others', async ({ chain, stack }) => {
  const { buyer, id } = await railPact(stack, 'x402');
  const wallet = chain.payers[0]!;
  for (const pins of [{ token: chain.payers[1]!.address }, { chainId: 1 }]) {
    await stack.client.fundWith(buyer, id, x402Payer({ account: wallet.account, budget: 10_000n, ...pins })).then(
      () => assert.unreachable('paid a requirement the pins refuse'),
      (error: unknown) => assert.instance(error, PaymentRefused),
    );
  }
  const pinned = x402Payer({ account: wallet.account, budget: 10_000n, token: chain.token.address, chainId: chain.chainId });
  assert.is((await stack.client.fundWith(buyer, id, pinned)).status, 200);
});

test('the SDK payer pays v2 and v1 requirements within its budget and refuses one beyond it, signing nothing', async ({ chain, stack }) => {
  const wallet = testWallet('sdk payer');
  await chain.mint(wallet.address, 5_000n);
  const v2 = x402Payer({ account: wallet.account, budget: 1_126n });
  const first = await railPact(stack, 'x402');
  assert.is((await stack.client.fundWith(first.buyer, first.id, v2)).status, 200);
  const v1 = x402Payer({ account: wallet.account, budget: 50n, version: 1 });
  assert.is((await stack.client.fundWith(first.seller, first.id, v1)).status, 200);
  assert.is(await chain.balanceOf(wallet.address), 5_000n - 1_126n);

  const second = await railPact(stack, 'x402');
  await stack.client.fundWith(second.buyer, second.id, v2).then(
    () => assert.unreachable('paid beyond the budget'),
    (error: unknown) => assert.instance(error, PaymentRefused),
  );
  assert.is(await chain.balanceOf(wallet.address), 5_000n - 1_126n);
});

test('a payout whose payee has no address waits, shown in /health, and is paid once the payee binds one', async ({ chain, stack }) => {
  const { seller, buyer, id } = await railPact(stack, 'x402');
  for (const [key, wallet] of [[buyer, chain.payers[0]!], [seller, chain.payers[1]!]] as const) {
    assert.is((await stack.client.fundWith(key, id, x402Payer({ account: wallet.account, budget: 1_076n }))).status, 200);
  }
  await stack.client.propose(seller, id, { evidence: [{ note: 'done' }], distribution: [{ party: seller.party, bp: 10000 }] });
  const disputed = await stack.client.object(buyer, id, 'not delivered');
  const settled = await stack.client.verdict(stack.evaluator, id, disputed.body.pact.inputHash as string, [{ party: buyer.party, bp: 10000 }], 'proposer', 'not delivered');
  assert.is(settled.status, 200, JSON.stringify(settled.body));
  // the seller's forfeited bond is the fee, due to the server's party, which has no x402 address yet
  const waiting = await until(async () => (await stack.client.request('GET', '/health')).body, (health) => health.paymentRails.x402.payoutsWaitingForAddress > 0);
  assert.ok(waiting.pending.payouts > 0, JSON.stringify(waiting));
  const fee = ((await stack.client.get(id)).body.pact as Pact).payouts.find((p) => p.kind === 'fee')!;
  assert.is(fee.status === 'paid', false);

  const server = loadKey(join(stack.dataDir, 'keys', 'server.seed'));
  const treasury = testWallet('server treasury');
  assert.is((await stack.client.bindAddress(server, 'x402', treasury.address)).status, 200);
  await stack.settledPayouts(id, 20_000);
  assert.is(await chain.balanceOf(treasury.address), 50n);
});

/** `read` again until `done` holds of what it gives (10 s at most). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test('health: the x402 rail is live, solvent and can pay out', async ({ chain, stack }) => {
  const health = (await stack.client.request('GET', '/health')).body;
  assert.ok(health.rails.includes('x402'));
  const rail = health.paymentRails.x402;
  assert.is(rail.live, true);
  assert.is(rail.solvency.ok, true);
  assert.is(rail.gas.ok, true);
  assert.is(rail.escrow, chain.escrow.address);
  assert.is(BigInt(rail.solvency.balance) >= BigInt(rail.solvency.liabilities), true);
  assert.is(health.payoutReadiness.treasury.x402, true);
});

test('a rail that is not ready (the escrow short of gas) refuses new pacts: 503 rail_not_ready, and /health says why', async ({ chain, dir }) => {
  const starved = await Stack.start({ env: { ...evmRailEnv(chain, dir), PACT_EVM_MIN_GAS_WEI: (10n ** 30n).toString() } });
  try {
    const health = (await starved.client.request('GET', '/health')).body;
    assert.is(health.ok, false);
    assert.is(health.paymentRails.x402.gas.ok, false);
    assert.is(health.payoutReadiness.treasury.x402, false);
    const { seller, buyer } = newParties();
    const refused = await starved.client.create(seller, tradeSpec(seller, buyer, { rail: 'x402' }));
    assert.is(refused.status, 503);
    assert.is((refused.body as unknown as { error: string }).error, 'rail_not_ready');
    assert.ok(refused.headers.get('retry-after'));
    // the mock rail of the same server still takes pacts
    assert.is((await starved.client.create(seller, tradeSpec(seller, buyer))).status, 200);
  } finally {
    await starved.stop();
  }
});

test('a server without the chain configured does not offer x402: 400 rail_not_available', async () => {
  const plain = await Stack.start();
  try {
    const { seller, buyer } = newParties();
    const refused = await plain.client.create(seller, tradeSpec(seller, buyer, { rail: 'x402' }));
    assert.is(refused.status, 400);
    assert.is((refused.body as unknown as { error: string }).error, 'rail_not_available');
    assert.not.ok((await plain.client.request('GET', '/health')).body.rails.includes('x402'));
  } finally {
    await plain.stop();
  }
});

test('a pact in another asset than the rail holds is refused at create', async ({ stack }) => {
  const { seller, buyer } = newParties();
  const spec = tradeSpec(seller, buyer, { rail: 'x402' });
  for (const party of spec.parties) {
    party.deposit.asset = 'EURC';
    party.bond.asset = 'EURC';
  }
  const refused = await stack.client.create(seller, spec);
  assert.is(refused.status, 400);
  assert.is((refused.body as unknown as { error: string }).error, 'invalid_request');
});

test.run();
