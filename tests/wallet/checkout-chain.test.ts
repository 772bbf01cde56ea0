import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { mppPayer } from '../../client/evm-payers.js';
import { startEvmStack, type EvmStack } from '../support/evm-chain.js';
import { asPaymentHeader, payV2 } from '../support/evm/x402-payments.js';
import { documentFits, pairedWallet, usd, walletCall } from '../support/wallet-client.js';

// A checkout paid on x402 or mpp (the escrow's rail code, on a local chain): a program asks for the requirement
// (402), pays it, and the wallet is credited once; the token moves once into the escrow wallet.

const test = suite<EvmStack>('checkout on x402 and mpp');
test.before(async (context) => {
  Object.assign(context, await startEvmStack({ payers: 3, mpp: true, env: { WALLET_CHECKOUT_RAILS: 'mock,x402,mpp' } }));
});
test.after(async (context) => {
  await context.stop();
});

async function openCheckout(context: EvmStack) {
  const wallet = await pairedWallet(context.stack, '0');
  const { checkout } = (await walletCall(context.stack, 'POST', '/v1/checkout', { amount: usd(2_000_000) }, wallet.auth)).body;
  return { wallet, pay: `${new URL(checkout.url).pathname}/pay`, page: new URL(checkout.url).pathname };
}

test('402 with the requirement, then X-PAYMENT: credited once, paid once', async (context) => {
  const { chain, stack } = context;
  const { wallet, pay, page } = await openCheckout(context);
  assert.match((await walletCall(stack, 'GET', page)).body, /X-PAYMENT/, 'the page tells programs how to pay');
  const page402 = await walletCall(stack, 'POST', pay, 'rail=x402');
  assert.equal([page402.status, page402.headers.get('content-type')?.startsWith('text/html')], [402, true], 'a browser gets a page');
  const quote = await walletCall(stack, 'POST', pay, { rail: 'x402' });
  const fits = await documentFits(stack);
  fits('POST', '/checkout/{id}/pay', quote, 402);
  assert.is(quote.body.error, 'payment_required');
  const accepts = quote.body.requirement.railData.accepts[0];
  assert.equal([accepts.amount, accepts.payTo.toLowerCase()], ['2000000', chain.escrow.address.toLowerCase()]);

  const payer = chain.payers[0]!;
  const before = await chain.balanceOf(payer.address);
  const header = asPaymentHeader(await payV2(payer, accepts));
  const paid = await walletCall(stack, 'POST', pay, { rail: 'x402' }, { 'x-payment': header });
  fits('POST', '/checkout/{id}/pay', paid, 200);
  fits('POST', '/checkout/{id}/pay', await walletCall(stack, 'POST', pay, { rail: { toString: 1 } }), 400);
  assert.ok(paid.headers.get('x-payment-response'), 'the settlement is told');
  assert.is(await chain.balanceOf(payer.address), before - 2_000_000n);
  const again = await walletCall(stack, 'POST', pay, { rail: 'x402' }, { 'x-payment': header });
  assert.is(again.status, 200);
  assert.is(again.body.checkout.status, 'completed');
  assert.is(await chain.balanceOf(payer.address), before - 2_000_000n, 'paid once');
  const me = (await walletCall(stack, 'GET', '/v1/me', undefined, wallet.auth)).body;
  assert.equal(me.wallet.balance, usd(2_000_000));
  assert.equal(me.ledger.items.map((item: { type: string }) => item.type), ['topup']);
});

test('a proof for another amount, or none that parses, is refused and credits nothing', async (context) => {
  const { chain, stack } = context;
  const { wallet, pay } = await openCheckout(context);
  const accepts = (await walletCall(stack, 'POST', pay, { rail: 'x402' })).body.requirement.railData.accepts[0];
  const short = asPaymentHeader(await payV2(chain.payers[1]!, { ...accepts, amount: '1000000' }));
  const refused = await walletCall(stack, 'POST', pay, { rail: 'x402' }, { 'x-payment': short });
  assert.is(refused.status, 402, JSON.stringify(refused.body));
  assert.is(refused.body.error, 'payment_failed');
  const garbage = await walletCall(stack, 'POST', pay, { rail: 'x402' }, { 'x-payment': 'not json' });
  assert.equal([garbage.status, garbage.body.error, garbage.body.reason], [402, 'payment_failed', 'invalid_proof']);
  assert.equal((await walletCall(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.wallet.balance, usd(0));
});

test('mpp: the challenge for the payer address, then Authorization: Payment: credited once, paid once', async (context) => {
  const { chain, stack } = context;
  const { wallet, pay } = await openCheckout(context);
  const payer = chain.payers[2]!;
  const noAddress = await walletCall(stack, 'POST', pay, { rail: 'mpp' });
  assert.equal([noAddress.status, noAddress.body.field], [400, 'railAddress']);
  const challenge = await walletCall(stack, 'POST', pay, { rail: 'mpp', railAddress: payer.address.toLowerCase() });
  assert.is(challenge.status, 402, JSON.stringify(challenge.body));
  assert.match(challenge.headers.get('www-authenticate') ?? '', /^Payment /);
  const before = await chain.balanceOf(payer.address);
  const credential = await mppPayer({ account: payer.account, budget: 2_000_000n })(challenge);
  const paid = await walletCall(stack, 'POST', pay, { rail: 'mpp', railAddress: payer.address }, { authorization: credential });
  assert.is(paid.status, 200, JSON.stringify(paid.body));
  assert.ok(paid.headers.get('payment-receipt'));
  const again = await walletCall(stack, 'POST', pay, { rail: 'mpp', railAddress: payer.address }, { authorization: credential });
  assert.equal([again.status, again.body.checkout.status], [200, 'completed']);
  assert.is(await chain.balanceOf(payer.address), before - 2_000_000n, 'paid once');
  assert.equal((await walletCall(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.wallet.balance, usd(2_000_000));

  const other = await openCheckout(context);
  const elsewhere = await walletCall(stack, 'POST', other.pay, { rail: 'mpp', railAddress: payer.address }, { authorization: credential });
  assert.equal([elsewhere.status, elsewhere.body.error, elsewhere.body.reason], [402, 'payment_failed', 'invalid_proof'], 'a credential answers its own checkout only');
});

const DAY = 86_400_000;

for (const how of ['the payer retries after expiry', 'the keeper finds it']) {
  test(`kill -9 after the money is taken, before the credit: ${how}, and the wallet is credited once`, async (context) => {
    const { chain, stack } = context;
    const { wallet, pay } = await openCheckout(context);
    const accepts = (await walletCall(stack, 'POST', pay, { rail: 'x402' })).body.requirement.railData.accepts[0];
    const payer = chain.payers[how.includes('retries') ? 0 : 1]!;
    const before = await chain.balanceOf(payer.address);
    const header = asPaymentHeader(await payV2(payer, accepts));
    await stack.crashDuring('checkout-collected', () => walletCall(stack, 'POST', pay, { rail: 'x402' }, { 'x-payment': header }));
    assert.is(await chain.balanceOf(payer.address), before - 2_000_000n, 'taken');
    assert.equal((await walletCall(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.wallet.balance, usd(0), 'not credited yet');
    await walletCall(stack, 'POST', '/__test/clock', { advanceMs: DAY }); // long expired; the keeper runs
    if (how.includes('retries')) {
      const retried = await walletCall(stack, 'POST', pay, { rail: 'x402' }, { 'x-payment': header });
      assert.is(retried.status, 200, JSON.stringify(retried.body));
    }
    const me = (await walletCall(stack, 'GET', '/v1/me', undefined, wallet.auth)).body;
    assert.equal(me.wallet.balance, usd(2_000_000));
    assert.equal(me.ledger.items.map((item: { type: string }) => item.type), ['topup']);
    assert.is(await chain.balanceOf(payer.address), before - 2_000_000n, 'taken once');
  });
}

test('an expired checkout nobody paid: 410 checkout_expired, and nothing is taken', async (context) => {
  const { chain, stack } = context;
  const { wallet, pay } = await openCheckout(context);
  const accepts = (await walletCall(stack, 'POST', pay, { rail: 'x402' })).body.requirement.railData.accepts[0];
  const header = asPaymentHeader(await payV2(chain.payers[1]!, accepts));
  await walletCall(stack, 'POST', '/__test/clock', { advanceMs: 31 * 60_000 });
  const before = await chain.balanceOf(chain.payers[1]!.address);
  const late = await walletCall(stack, 'POST', pay, { rail: 'x402' }, { 'x-payment': header });
  assert.equal([late.status, late.body.error], [410, 'checkout_expired']);
  assert.is(await chain.balanceOf(chain.payers[1]!.address), before);
  assert.equal((await walletCall(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.wallet.balance, usd(0));
});

test.run();
