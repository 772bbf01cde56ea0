import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';
import { pairedWallet as funded, usd, walletCall as call } from '../support/wallet-client.js';

const pairedWallet = (stack: Stack) => funded(stack, '0');

// Hosted checkout over HTTP: a bearer opens it, its page pays it on the mock rail, the wallet is credited
// exactly once with a `topup` in its ledger; an expired checkout never credits.

const test = suite<{ stack: Stack }>('checkout over HTTP');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});



const open = (stack: Stack, auth: Record<string, string>, amount: string, extra: Record<string, string> = {}, headers: Record<string, string> = {}) =>
  call(stack, 'POST', '/v1/checkout', { amount: usd(amount), ...extra }, { ...auth, ...headers });
const pathOf = (url: string) => new URL(url).pathname;

test('a checkout is opened, its page shows the amount, paying credits the wallet once with a topup entry', async ({ stack }) => {
  const { id, auth } = await pairedWallet(stack);
  const opened = await open(stack, auth, '25000000');
  assert.is(opened.status, 201, JSON.stringify(opened.body));
  const { checkout } = opened.body;
  assert.match(checkout.id, /^co_/);
  assert.is(checkout.walletId, id);
  assert.is(checkout.status, 'open');
  assert.equal(checkout.amount, usd('25000000'));
  assert.ok(Date.parse(checkout.expiresAt) > Date.now() + 29 * 60_000);

  const page = await call(stack, 'GET', pathOf(checkout.url));
  assert.is(page.status, 200);
  assert.match(page.body, /\$25\.00/);
  assert.match(page.body, /<option value="mock">/);

  const paid = await call(stack, 'POST', `${pathOf(checkout.url)}/pay`, 'rail=mock');
  assert.is(paid.status, 200);
  assert.match(paid.body, /added to the wallet/);
  const again = await call(stack, 'POST', `${pathOf(checkout.url)}/pay`, 'rail=mock');
  assert.match(again.body, /paid already/);

  const me = (await call(stack, 'GET', '/v1/me', undefined, auth)).body;
  assert.equal([me.wallet.balance, me.wallet.held, me.wallet.available], [usd('25000000'), usd('0'), usd('25000000')]);
  assert.equal(me.funding.totalFunded, usd('25000000'));
  assert.is(me.funding.checkouts[0].status, 'completed');
  assert.is(me.ledger.items.length, 1);
  const [entry] = me.ledger.items;
  assert.is(entry.type, 'topup');
  assert.equal([entry.amount, entry.balanceAfter, entry.availableAfter], [usd('25000000'), usd('25000000'), usd('25000000')]);
  assert.equal(entry.reference, { kind: 'checkout', id: checkout.id });
  assert.match(entry.id, /^le_/);
  assert.match(entry.transactionId, /^tx_/);
});

test('five payments of one checkout at once credit it once', async ({ stack }) => {
  const { auth } = await pairedWallet(stack);
  const { checkout } = (await open(stack, auth, '1000000')).body;
  await Promise.all(Array.from({ length: 5 }, () => call(stack, 'POST', `${pathOf(checkout.url)}/pay`, 'rail=mock')));
  const me = (await call(stack, 'GET', '/v1/me', undefined, auth)).body;
  assert.equal(me.wallet.balance, usd('1000000'));
  assert.is(me.ledger.items.length, 1);
});

test('an expired checkout never credits: 410, and it reads expired', async ({ stack }) => {
  const { auth } = await pairedWallet(stack);
  const { checkout } = (await open(stack, auth, '2000000')).body;
  await call(stack, 'POST', '/__test/clock', { advanceMs: 31 * 60_000 });
  const late = await call(stack, 'POST', `${pathOf(checkout.url)}/pay`, 'rail=mock');
  assert.is(late.status, 410);
  const me = (await call(stack, 'GET', '/v1/me', undefined, auth)).body;
  assert.equal(me.wallet.balance, usd('0'));
  assert.is(me.funding.checkouts[0].status, 'expired');
});

test('successUrl: paying redirects there (303)', async ({ stack }) => {
  const { auth } = await pairedWallet(stack);
  const { checkout } = (await open(stack, auth, '1000000', { successUrl: 'https://agent.example/done' })).body;
  const paid = await call(stack, 'POST', `${pathOf(checkout.url)}/pay`, 'rail=mock');
  assert.is(paid.status, 303);
  assert.is(paid.headers.get('location'), 'https://agent.example/done');
});

test('refusals: amounts outside 1 to 500 USD, another asset, no bearer, an unknown rail or checkout', async ({ stack }) => {
  const { auth } = await pairedWallet(stack);
  for (const amount of ['999999', '500000001', '0', '1.5', '-1']) {
    const refused = await open(stack, auth, amount);
    assert.is(refused.status, 400, amount);
    assert.is(refused.body.error, 'invalid_request');
  }
  assert.is((await call(stack, 'POST', '/v1/checkout', { amount: { amount: '1000000', asset: 'EUR' } }, auth)).status, 400);
  assert.is((await call(stack, 'POST', '/v1/checkout', { amount: usd('1000000') })).status, 401);
  const { checkout } = (await open(stack, auth, '1000000')).body;
  assert.is((await call(stack, 'POST', `${pathOf(checkout.url)}/pay`, 'rail=x402')).status, 400);
  assert.is((await call(stack, 'GET', '/checkout/co_notarealcheckoutid12345')).status, 404);
  assert.is((await call(stack, 'POST', '/checkout/co_notarealcheckoutid12345/pay', 'rail=mock')).status, 404);
});

test('Idempotency-Key on checkout: a retry gets the stored 201; the ledger pages by cursor', async ({ stack }) => {
  const { auth } = await pairedWallet(stack);
  const key = { 'idempotency-key': 'checkout-once' };
  const first = await open(stack, auth, '1000000', {}, key);
  const replay = await open(stack, auth, '1000000', {}, key);
  assert.is(replay.status, 201);
  assert.is(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.body, first.body);
  for (const checkout of [first.body.checkout, (await open(stack, auth, '2000000')).body.checkout, (await open(stack, auth, '3000000')).body.checkout]) {
    await call(stack, 'POST', `${pathOf(checkout.url)}/pay`, 'rail=mock');
  }
  const page1 = (await call(stack, 'GET', '/v1/me?limit=2', undefined, auth)).body.ledger;
  assert.equal(page1.items.map((e: any) => e.amount.amount), ['3000000', '2000000']);
  assert.ok(page1.nextCursor);
  const page2 = (await call(stack, 'GET', `/v1/me?limit=2&cursor=${page1.nextCursor}`, undefined, auth)).body.ledger;
  assert.equal(page2.items.map((e: any) => e.amount.amount), ['1000000']);
  assert.is(page2.nextCursor, null);
  assert.is((await call(stack, 'GET', '/v1/me?cursor=bogus', undefined, auth)).status, 400);
  assert.is((await call(stack, 'GET', '/v1/me?limit=101', undefined, auth)).status, 400);
});

test.run();
