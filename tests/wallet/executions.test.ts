import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';
import { documentFits, pairedWallet, usd, walletCall as call } from '../support/wallet-client.js';

// POST /v1/executions through the test hooks' test.echo (a plain HTTP capability priced by the catalog): the price
// held, then captured with a receipt, or released whole on a provider failure; top-up required, input refused,
// price above the maximum; a burst at one wallet never overspends.

const test = suite<{ stack: Stack }>('executions over HTTP');
const INTERNAL = 'internal token of the executions tests';
test.before(async (context) => {
  context.stack = await Stack.start({ env: { WALLET_INTERNAL_TOKEN: INTERNAL } });
});
test.after(async ({ stack }) => {
  await stack?.stop();
});

const ECHO_PRICE = 10_000n;
const execute = (stack: Stack, auth: Record<string, string>, body: unknown, headers: Record<string, string> = {}) => call(stack, 'POST', '/v1/executions', body, { ...auth, ...headers });

test('an answer: charged once, with a receipt, the ledger showing hold, hold_release and debit', async ({ stack }) => {
  const fits = await documentFits(stack);
  const wallet = await pairedWallet(stack, '1000000');
  const done = await execute(stack, wallet.auth, { capabilityId: 'test.echo', input: { text: 'hello' } });
  fits('POST', '/v1/executions', done, 200);
  assert.equal(done.body.result, { text: 'hello' });
  const { execution, receipt } = done.body;
  assert.equal([execution.status, receipt.charged, receipt.released, receipt.quoted], ['succeeded', usd(ECHO_PRICE), usd(0), usd(ECHO_PRICE)]);
  assert.match(receipt.inputHash, /^[0-9a-f]{64}$/);
  assert.match(receipt.outputHash, /^[0-9a-f]{64}$/);
  assert.is(receipt.ledgerTxIds.length, 2);
  const read = await call(stack, 'GET', `/v1/executions/${execution.id}`, undefined, wallet.auth);
  fits('GET', '/v1/executions/{id}', read, 200);
  assert.equal(read.body.receipt, receipt);
  const me = (await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body;
  assert.equal(me.wallet.balance, usd(1_000_000n - ECHO_PRICE));
  assert.equal(me.ledger.items.slice(0, 3).map((item: { type: string }) => item.type), ['debit', 'hold_release', 'hold']);
  const stranger = await pairedWallet(stack, '0');
  fits('GET', '/v1/executions/{id}', await call(stack, 'GET', `/v1/executions/${execution.id}`, undefined, stranger.auth), 404);
  for (const name of ['constructor', '__proto__', 'toString']) fits('GET', '/v1/executions/{id}', await call(stack, 'GET', `/v1/executions/${name}`, undefined, wallet.auth), 404);
  assert.equal([me.usage.executions, me.usage.totalSpent], [1, usd(ECHO_PRICE)]);
});

test('a provider failure: 502 provider_failed with the receipt, the whole hold released', async ({ stack }) => {
  const fits = await documentFits(stack);
  const wallet = await pairedWallet(stack, '1000000');
  await call(stack, 'POST', '/__test/providers', { failNext: true });
  const failed = await execute(stack, wallet.auth, { capabilityId: 'test.echo', input: { text: 'hello' } });
  fits('POST', '/v1/executions', failed, 502);
  assert.equal([failed.body.execution.status, failed.body.receipt.charged, failed.body.receipt.released], ['failed', usd(0), usd(ECHO_PRICE)]);
  const { wallet: after } = (await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body;
  assert.equal([after.balance, after.held], [usd(1_000_000), usd(0)]);
});

test('refusals change nothing: top-up required, input refused, price above the maximum, unknown capability, no bearer', async ({ stack }) => {
  const fits = await documentFits(stack);
  const empty = await pairedWallet(stack, '0');
  const topup = await execute(stack, empty.auth, { capabilityId: 'test.echo', input: { text: 'hi' } });
  fits('POST', '/v1/executions', topup, 402);
  assert.equal([topup.body.error, topup.body.shortfall, topup.body.topUp], ['topup_required', usd(ECHO_PRICE), { method: 'POST', path: '/v1/checkout' }]);
  const keyed = { 'idempotency-key': 'after-topup' };
  assert.is((await execute(stack, empty.auth, { capabilityId: 'test.echo', input: { text: 'hi' } }, keyed)).status, 402);
  const { checkout } = (await call(stack, 'POST', '/v1/checkout', { amount: usd(1_000_000) }, empty.auth)).body;
  await call(stack, 'POST', `${new URL(checkout.url).pathname}/pay`, 'rail=mock');
  assert.is((await execute(stack, empty.auth, { capabilityId: 'test.echo', input: { text: 'hi' } }, keyed)).status, 200, 'a refusal is not kept under the key');
  const wallet = await pairedWallet(stack, '1000000');
  fits('POST', '/v1/executions', await execute(stack, wallet.auth, { capabilityId: 'test.echo', input: { message: 'no text' } }), 400);
  const dear = await execute(stack, wallet.auth, { capabilityId: 'test.echo', input: { text: 'hi' }, maxPrice: usd(9_999) });
  fits('POST', '/v1/executions', dear, 422);
  assert.is(dear.body.error, 'price_above_max');
  fits('POST', '/v1/executions', await execute(stack, wallet.auth, { capabilityId: 'no.such', input: {} }), 404);
  fits('POST', '/v1/executions', await execute(stack, {}, { capabilityId: 'test.echo', input: { text: 'hi' } }), 401);
  const blocked = await execute(stack, wallet.auth, { capabilityId: 'weather.forecast', input: { location: 'Lisbon' } });
  fits('POST', '/v1/executions', blocked, 400);
  assert.equal([blocked.body.error, blocked.body.field], ['invalid_request', 'capabilityId']);
  assert.ok(blocked.body.blockingRequirements.length > 0);
  const { wallet: after } = (await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body;
  assert.equal([after.balance, after.held], [usd(1_000_000), usd(0)]);
  assert.equal((await call(stack, 'GET', '/v1/me', undefined, empty.auth)).body.ledger.items.map((item: { type: string }) => item.type), ['debit', 'hold_release', 'hold', 'topup'], 'the refusals left nothing');
});

test('the same Idempotency-Key runs once; 40 executions at once at a wallet that affords 25: 25 run, 15 top-up, never overspent', async ({ stack }) => {
  const wallet = await pairedWallet(stack, '1000000');
  const key = { 'idempotency-key': 'run-once' };
  const first = await execute(stack, wallet.auth, { capabilityId: 'test.echo', input: { text: 'once' } }, key);
  const again = await execute(stack, wallet.auth, { capabilityId: 'test.echo', input: { text: 'once' } }, key);
  assert.equal([again.status, again.headers.get('idempotent-replayed'), again.body.execution.id], [200, 'true', first.body.execution.id]);
  // Hold all but 25 prices with a reservation, then race.
  const left = 25n * ECHO_PRICE;
  const held = await call(stack, 'POST', '/v1/internal/agent-pact/reservations', { walletId: wallet.id, amount: usd(1_000_000n - ECHO_PRICE - left), activity: { kind: 'pact', pactId: 'p_race', party: 'a', role: 'funder' } }, { authorization: `Bearer ${INTERNAL}` });
  assert.is(held.status, 201, JSON.stringify(held.body));
  const answers = await Promise.all(Array.from({ length: 40 }, (_, i) => execute(stack, wallet.auth, { capabilityId: 'test.echo', input: { text: `race ${i}` } })));
  const statuses = answers.map((a) => a.status);
  assert.is(statuses.filter((s) => s === 200).length, 25, JSON.stringify(statuses));
  assert.is(statuses.filter((s) => s === 402).length, 15);
  const after = (await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.wallet;
  assert.equal([after.balance, after.held, after.available], [usd(1_000_000n - ECHO_PRICE - left), usd(1_000_000n - ECHO_PRICE - left), usd(0)]);
});

test('kill -9 after the hold, before the call: the keeper releases it, and the same Idempotency-Key never calls again', async ({ stack }) => {
  const wallet = await pairedWallet(stack, '1000000');
  const key = { 'idempotency-key': 'through-a-crash' };
  const body = { capabilityId: 'test.echo', input: { text: 'crash' } };
  await stack.crashDuring('execution-held', () => execute(stack, wallet.auth, body, key));
  assert.equal((await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.wallet.held, usd(ECHO_PRICE), 'held, no outcome');
  await call(stack, 'POST', '/__test/clock', { advanceMs: 4 * 60_000 }); // past any call's time: the keeper ends it
  const me = (await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body;
  assert.equal([me.wallet.balance, me.wallet.held], [usd(1_000_000), usd(0)]);
  const retried = await execute(stack, wallet.auth, body, key);
  assert.equal([retried.status, retried.body.error, retried.body.execution.status, retried.body.receipt.released], [502, 'provider_failed', 'failed', usd(ECHO_PRICE)]);
  const ledger = (await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.ledger.items.map((item: { type: string }) => item.type);
  assert.equal(ledger, ['hold_release', 'hold', 'topup'], 'one hold, given back; never a second call');
});

test.run();
