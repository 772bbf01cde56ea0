import { Validator } from '@seriousme/openapi-schema-validator';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';
import { documentFits, walletCall as call } from '../support/wallet-client.js';

// The credit wallet service's first routes over HTTP, against the process `npm start` runs: a wallet with its
// one-time pairing, the claim for the access token, bearer reads, idempotent creation.

const test = suite<{ stack: Stack }>('wallets over HTTP');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});


const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const ZERO = { amount: '0', asset: 'USD' };

test('a wallet starts pending with zero balance and a one-time pairing; claiming it gives the access token, once', async ({ stack }) => {
  const created = await call(stack, 'POST', '/v1/wallets', { label: 'research agent', ownerEmail: 'owner@example.com' });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const { wallet, pairing } = created.body;
  assert.match(wallet.id, /^w_[1-9A-HJ-NP-Za-km-z]{20,}$/);
  assert.is(wallet.status, 'pending_pairing');
  assert.equal([wallet.balance, wallet.held, wallet.available], [ZERO, ZERO, ZERO]);
  assert.match(pairing.id, /^pr_/);
  assert.match(pairing.token, /^wpt_[A-Za-z0-9_-]{43}$/);
  assert.match(pairing.code, /^[A-HJ-NP-Z2-9]{4}-[A-HJ-NP-Z2-9]{4}$/);
  assert.ok(Date.parse(pairing.expiresAt) > Date.now() + 14 * 60_000);
  assert.match(pairing.claimUrl, /\/v1\/pairings\/claim$/);

  const claimed = await call(stack, 'POST', '/v1/pairings/claim', { token: pairing.token });
  assert.is(claimed.status, 200, JSON.stringify(claimed.body));
  assert.is(claimed.body.tokenType, 'Bearer');
  assert.match(claimed.body.accessToken, /^wk_[A-Za-z0-9_-]{43}$/);
  assert.is(claimed.body.wallet.status, 'active');

  const again = await call(stack, 'POST', '/v1/pairings/claim', { token: pairing.token });
  assert.is(again.status, 409);
  assert.is(again.body.error, 'pairing_used');
  const byCode = await call(stack, 'POST', '/v1/pairings/claim', { code: pairing.code.toLowerCase() });
  assert.is(byCode.status, 409);

  const read = await call(stack, 'GET', `/v1/wallets/${wallet.id}`, undefined, bearer(claimed.body.accessToken));
  assert.is(read.status, 200);
  assert.equal(read.body.wallet, { ...claimed.body.wallet });
  const me = await call(stack, 'GET', '/v1/me', undefined, bearer(claimed.body.accessToken));
  assert.is(me.status, 200);
  assert.is(me.body.wallet.id, wallet.id);
  assert.equal(me.body.ledger, { items: [], nextCursor: null });
});

test('a pairing code claims like the token (any case, with or without its dash); unknown is 404', async ({ stack }) => {
  const { pairing } = (await call(stack, 'POST', '/v1/wallets', {})).body;
  const unknown = await call(stack, 'POST', '/v1/pairings/claim', { code: 'AAAA-AAAA' });
  assert.is(unknown.status, 404);
  assert.is(unknown.body.error, 'not_found');
  const claimed = await call(stack, 'POST', '/v1/pairings/claim', { code: ` ${pairing.code.replace('-', '').toLowerCase()} ` });
  assert.is(claimed.status, 200, JSON.stringify(claimed.body));
});

test('ten claims of one pairing at once: one access token, nine 409 pairing_used, and only that token opens the wallet', async ({ stack }) => {
  const { wallet, pairing } = (await call(stack, 'POST', '/v1/wallets')).body;
  const claims = await Promise.all(Array.from({ length: 10 }, () => call(stack, 'POST', '/v1/pairings/claim', { token: pairing.token })));
  assert.equal(claims.map((c) => c.status).sort(), [200, 409, 409, 409, 409, 409, 409, 409, 409, 409], JSON.stringify(claims.map((c) => c.body)));
  const winner = claims.find((c) => c.status === 200)!.body.accessToken;
  assert.is((await call(stack, 'GET', `/v1/wallets/${wallet.id}`, undefined, bearer(winner))).status, 200);
});

test('an expired pairing is 410 pairing_expired', async ({ stack }) => {
  const { pairing } = (await call(stack, 'POST', '/v1/wallets')).body;
  const moved = await call(stack, 'POST', '/__test/clock', { advanceMs: 16 * 60_000 });
  assert.is(moved.status, 200);
  const late = await call(stack, 'POST', '/v1/pairings/claim', { token: pairing.token });
  assert.is(late.status, 410);
  assert.is(late.body.error, 'pairing_expired');
});

test('bearer routes: no token or an unknown one is 401, another wallet’s id is 403', async ({ stack }) => {
  const first = (await call(stack, 'POST', '/v1/wallets')).body;
  const second = (await call(stack, 'POST', '/v1/wallets')).body;
  const { accessToken } = (await call(stack, 'POST', '/v1/pairings/claim', { token: first.pairing.token })).body;
  assert.is((await call(stack, 'GET', `/v1/wallets/${first.wallet.id}`)).status, 401);
  assert.is((await call(stack, 'GET', `/v1/wallets/${first.wallet.id}`, undefined, bearer(`wk_${'A'.repeat(43)}`))).body.error, 'unauthorized');
  assert.is((await call(stack, 'GET', '/v1/me', undefined, bearer(first.pairing.token))).status, 401); // a pairing token opens nothing
  const other = await call(stack, 'GET', `/v1/wallets/${second.wallet.id}`, undefined, bearer(accessToken));
  assert.is(other.status, 403);
  assert.is(other.body.error, 'forbidden');
});

test('Idempotency-Key: a retry gets the first response (pairing included), another body 422, malformed input 400', async ({ stack }) => {
  const key = { 'idempotency-key': `create-${Date.now()}` };
  const first = await call(stack, 'POST', '/v1/wallets', { label: 'once' }, key);
  assert.is(first.status, 201);
  const replay = await call(stack, 'POST', '/v1/wallets', { label: 'once' }, key);
  assert.is(replay.status, 201);
  assert.is(replay.headers.get('idempotent-replayed'), 'true');
  assert.equal(replay.body, first.body);
  const reused = await call(stack, 'POST', '/v1/wallets', { label: 'twice' }, key);
  assert.is(reused.status, 422);
  assert.is(reused.body.error, 'idempotency_key_reused');
  for (const body of [{ label: 7 }, { unknown: true }, { ownerEmail: 'not an email' }, [1]]) {
    const refused = await call(stack, 'POST', '/v1/wallets', body);
    assert.is(refused.status, 400, JSON.stringify(body));
    assert.is(refused.body.error, 'invalid_request');
  }
  const both = await call(stack, 'POST', '/v1/pairings/claim', { token: 'x', code: 'y' });
  assert.is(both.status, 400);
});

test('the internal reservation routes fail closed: 503 when WALLET_INTERNAL_TOKEN is not set', async ({ stack }) => {
  const refused = await call(stack, 'POST', '/v1/internal/agent-pact/reservations', {}, bearer('anything'));
  assert.is(refused.status, 503);
  assert.is(refused.body.error, 'unavailable');
});

test('wallet creation and pairing claims are rate limited per IP: 429 rate_limited with Retry-After', async () => {
  const limited = await Stack.start({ env: { WALLET_RATE_LIMIT_CREATES: '2', WALLET_RATE_LIMIT_CLAIMS: '2' } });
  try {
    const creates = [];
    for (let i = 0; i < 3; i++) creates.push(await call(limited, 'POST', '/v1/wallets'));
    assert.equal(creates.map((c) => c.status), [201, 201, 429]);
    assert.is(creates[2]!.body.error, 'rate_limited');
    assert.ok(Number(creates[2]!.headers.get('retry-after')) > 0);
    const claims = [];
    for (let i = 0; i < 3; i++) claims.push((await call(limited, 'POST', '/v1/pairings/claim', { code: 'AAAA-AAAA' })).status);
    assert.equal(claims, [404, 404, 429]);
  } finally {
    await limited.stop();
  }
});

test('a checkout URL must be a plain http(s) URL; a token claims only as a token, a bearer scheme in any case', async ({ stack }) => {
  const { pairing } = (await call(stack, 'POST', '/v1/wallets')).body;
  assert.is((await call(stack, 'POST', '/v1/pairings/claim', { token: pairing.code })).status, 404); // a code is not a token
  const { accessToken } = (await call(stack, 'POST', '/v1/pairings/claim', { code: pairing.code })).body;
  const auth = { authorization: `bearer ${accessToken}` };
  assert.is((await call(stack, 'GET', '/v1/me', undefined, auth)).status, 200);
  for (const successUrl of ['javascript:alert(1)', 'https://a.example/\u00e9\n', 'ftp://a.example/']) {
    const refused = await call(stack, 'POST', '/v1/checkout', { amount: { amount: '1000000', asset: 'USD' }, successUrl }, auth);
    assert.is(refused.status, 400, successUrl);
  }
  assert.is((await call(stack, 'GET', '/v1/wallets/%zz')).status, 404);
});

test('the OpenAPI document: title Wallet, version 0.5.0, the routes built', async ({ stack }) => {
  const { body } = await call(stack, 'GET', '/openapi.json');
  assert.is(body.openapi, '3.1.0');
  assert.equal(body.info.title, 'Wallet');
  assert.equal(body.info.version, '0.5.0');
  const paths = ['/v1/catalog', '/v1/registry', '/v1/discover', '/v1/wallets', '/v1/wallets/{id}', '/v1/me', '/v1/pairings/claim', '/v1/checkout', '/v1/internal/agent-pact/reservations', '/v1/internal/agent-pact/reservations/{id}', '/v1/internal/agent-pact/reservations/{id}/settle', '/v1/internal/agent-pact/reservations/{id}/release'];
  for (const path of paths) assert.ok(body.paths[path], path);
  assert.not.ok(body.paths['/__test/clock']);
  // The spec's 15 routes, each with its operationId.
  const operations = Object.values(body.paths as Record<string, Record<string, { operationId?: string }>>).flatMap((methods) => Object.values(methods).map((op) => op.operationId));
  const spec = ['getCatalog', 'getRegistry', 'discoverCapabilities', 'createWallet', 'getWallet', 'createCheckout', 'getWalletOverview', 'claimPairing', 'executeCapability', 'getExecution', 'reserveAgentPactCredits', 'getAgentPactReservation', 'settleAgentPactCredits', 'releaseAgentPactCredits', 'mcp'];
  for (const operationId of spec) assert.ok(operations.includes(operationId), operationId);
  const result = await new Validator().validate(body);
  assert.ok(result.valid, JSON.stringify(result.errors));
});

test('answers on the wire fit what the document says of their route', async ({ stack }) => {
  const fits = await documentFits(stack);
  const created = await call(stack, 'POST', '/v1/wallets', {});
  fits('POST', '/v1/wallets', created, 201);
  const claimed = await call(stack, 'POST', '/v1/pairings/claim', { token: created.body.pairing.token });
  fits('POST', '/v1/pairings/claim', claimed, 200);
  fits('POST', '/v1/pairings/claim', await call(stack, 'POST', '/v1/pairings/claim', { token: created.body.pairing.token }), 409);
  const auth = bearer(claimed.body.accessToken);
  fits('GET', '/v1/wallets/{id}', await call(stack, 'GET', `/v1/wallets/${created.body.wallet.id}`, undefined, auth), 200);
  fits('GET', '/v1/wallets/{id}', await call(stack, 'GET', `/v1/wallets/${created.body.wallet.id}`), 401);
  const checkout = await call(stack, 'POST', '/v1/checkout', { amount: { amount: '1000000', asset: 'USD' } }, auth);
  fits('POST', '/v1/checkout', checkout, 201);
  await call(stack, 'POST', `${new URL(checkout.body.checkout.url).pathname}/pay`, 'rail=mock');
  fits('GET', '/v1/me', await call(stack, 'GET', '/v1/me', undefined, auth), 200);
  fits('GET', '/v1/me', await call(stack, 'GET', '/v1/me?cursor=nonsense', undefined, auth), 400);
  const reserve = { walletId: created.body.wallet.id, amount: { amount: '1', asset: 'USD' }, activity: { kind: 'pact', pactId: 'p_1', party: 'a', role: 'funder' } };
  fits('POST', '/v1/internal/agent-pact/reservations', await call(stack, 'POST', '/v1/internal/agent-pact/reservations', reserve), 503);
});

test.run();
