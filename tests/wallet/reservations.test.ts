import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';
import { documentFits, pairedWallet as fundedWallet, usd, walletCall as call } from '../support/wallet-client.js';

// The internal agent-pact reservations over HTTP: reserve idempotently, settle exactly once with credits to
// other wallets, release exactly once; hundreds at one wallet at once never overspend or settle twice.

const INTERNAL = 'internal token of the reservation tests';
const test = suite<{ stack: Stack }>('reservations over HTTP');

test.before(async (context) => {
  context.stack = await Stack.start({ env: { WALLET_INTERNAL_TOKEN: INTERNAL } });
});
test.after(async ({ stack }) => {
  await stack.stop();
});


const internal = { authorization: `Bearer ${INTERNAL}` };
const PATH = '/v1/internal/agent-pact/reservations';


const reserve = (stack: Stack, walletId: string, amount: string, pactId: string, headers: Record<string, string> = {}) =>
  call(stack, 'POST', PATH, { walletId, amount: usd(amount), activity: { kind: 'pact', pactId, party: 'ed25519:buyer', role: 'buyer' } }, { ...internal, ...headers });
const balances = async (stack: Stack, wallet: { auth: Record<string, string> }) => {
  const { balance, held, available } = (await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.wallet;
  return [balance.amount, held.amount, available.amount];
};

test('the internal routes need the internal token: none or another is 401', async ({ stack }) => {
  const payer = await fundedWallet(stack, '0');
  assert.is((await call(stack, 'POST', PATH, { walletId: payer.id })).status, 401);
  assert.is((await call(stack, 'GET', `${PATH}/rsv_aaaaaaaaaaaaaaaaaaaaaaaa`, undefined, { authorization: 'Bearer nope' })).body.error, 'unauthorized');
});

test('reserve holds credit, idempotently by pact and party; another body is 422; too much is 402 insufficient_credit', async ({ stack }) => {
  const payer = await fundedWallet(stack, '10000000');
  const held = await reserve(stack, payer.id, '4000000', 'p_one');
  assert.is(held.status, 201, JSON.stringify(held.body));
  const { reservation } = held.body;
  assert.match(reservation.id, /^rsv_/);
  assert.is(reservation.status, 'held');
  assert.equal(reservation.wallet, { balance: usd(10000000), held: usd(4000000), available: usd(6000000), status: 'active' });
  assert.equal(reservation.activity, { kind: 'pact', pactId: 'p_one', party: 'ed25519:buyer', role: 'buyer', state: null });

  const replay = await reserve(stack, payer.id, '4000000', 'p_one');
  assert.is(replay.status, 200);
  assert.is(replay.body.reservation.id, reservation.id);
  const other = await reserve(stack, payer.id, '5000000', 'p_one');
  assert.is(other.status, 422);
  assert.is(other.body.error, 'idempotency_key_reused');

  const short = await reserve(stack, payer.id, '6000001', 'p_two');
  assert.is(short.status, 402);
  assert.is(short.body.error, 'insufficient_credit');
  assert.equal([short.body.requested, short.body.available], [usd(6000001), usd(6000000)]);
  assert.equal(await balances(stack, payer), ['10000000', '4000000', '6000000']);
  assert.is((await call(stack, 'GET', '/v1/me', undefined, payer.auth)).body.usage.openReservations, 1);
  const read = await call(stack, 'GET', `${PATH}/${reservation.id}`, undefined, internal);
  assert.equal(read.body.reservation, reservation);
});

test('settle: the debit goes to the payees once, the rest comes back; a repeat replays, another body or a release is 409', async ({ stack }) => {
  const payer = await fundedWallet(stack, '10000000');
  const [seller, fee] = [await fundedWallet(stack, '0'), await fundedWallet(stack, '0')];
  const { reservation } = (await reserve(stack, payer.id, '10000000', 'p_settle')).body;
  const settle = { activityState: 'SETTLED', debit: usd(7000000), credits: [{ walletId: seller.id, amount: usd(6500000) }, { walletId: fee.id, amount: usd(500000) }], reference: 'p_settle:settle' };
  const settled = await call(stack, 'POST', `${PATH}/${reservation.id}/settle`, settle, internal);
  assert.is(settled.status, 200, JSON.stringify(settled.body));
  assert.is(settled.body.reservation.status, 'settled');
  assert.equal([settled.body.reservation.settled, settled.body.reservation.released], [usd(7000000), usd(3000000)]);
  assert.is(settled.body.reservation.activity.state, 'SETTLED');
  const again = await call(stack, 'POST', `${PATH}/${reservation.id}/settle`, settle, internal);
  assert.is(again.status, 200);
  assert.equal(again.body, settled.body);
  const changed = await call(stack, 'POST', `${PATH}/${reservation.id}/settle`, { ...settle, reference: 'another' }, internal);
  assert.is(changed.status, 409);
  assert.is(changed.body.error, 'reservation_not_held');
  assert.is(changed.body.reservation.status, 'settled');
  assert.is((await call(stack, 'POST', `${PATH}/${reservation.id}/release`, {}, internal)).status, 409);

  assert.equal(await balances(stack, payer), ['3000000', '0', '3000000']);
  assert.equal(await balances(stack, seller), ['6500000', '0', '6500000']);
  assert.equal(await balances(stack, fee), ['500000', '0', '500000']);
  const ledger = (await call(stack, 'GET', '/v1/me', undefined, payer.auth)).body.ledger.items.map((e: any) => [e.type, e.amount.amount]);
  assert.equal(ledger, [['debit', '-7000000'], ['hold_release', '10000000'], ['hold', '-10000000'], ['topup', '10000000']]);
  assert.is(ledger.reduce((sum: bigint, [, amount]: [string, string]) => sum + BigInt(amount), 0n), 3000000n); // the entries add up to the balance
  assert.equal((await call(stack, 'GET', '/v1/me', undefined, payer.auth)).body.usage, { totalSpent: usd(7000000), executions: 0, openReservations: 0 });
  const credit = (await call(stack, 'GET', '/v1/me', undefined, seller.auth)).body.ledger.items[0];
  assert.equal([credit.type, credit.amount.amount, credit.reference], ['credit', '6500000', { kind: 'reservation', id: reservation.id }]);
});

test('settle refuses a debit above the reservation or credits that do not add up (400), changing nothing', async ({ stack }) => {
  const payer = await fundedWallet(stack, '5000000');
  const payee = await fundedWallet(stack, '0');
  const { reservation } = (await reserve(stack, payer.id, '5000000', 'p_bad')).body;
  const bodies = [
    { activityState: 'SETTLED', debit: usd(5000001), credits: [{ walletId: payee.id, amount: usd(5000001) }], reference: 'r' },
    { activityState: 'SETTLED', debit: usd(3000000), credits: [{ walletId: payee.id, amount: usd(2000000) }], reference: 'r' },
    { activityState: 'SETTLED', debit: usd(1000000), credits: [{ walletId: 'w_nosuchwalletanywhere1234', amount: usd(1000000) }], reference: 'r' },
    { activityState: 'DONE', debit: usd(0), credits: [], reference: 'r' },
  ];
  for (const body of bodies) assert.is((await call(stack, 'POST', `${PATH}/${reservation.id}/settle`, body, internal)).status, 400, JSON.stringify(body));
  assert.equal(await balances(stack, payer), ['5000000', '5000000', '0']);
  // CANCELLED with a debit of 0 gives everything back
  const cancelled = await call(stack, 'POST', `${PATH}/${reservation.id}/settle`, { activityState: 'CANCELLED', debit: usd(0), credits: [], reference: 'p_bad:cancel' }, internal);
  assert.is(cancelled.status, 200, JSON.stringify(cancelled.body));
  assert.equal(await balances(stack, payer), ['5000000', '0', '5000000']);
});

test('ids are wallet ids, never NATS wildcards; an empty Idempotency-Key is 400; a hold past its expiry is released by the keeper and then settles and releases nothing (409)', async ({ stack }) => {
  const payer = await fundedWallet(stack, '2000000');
  for (const walletId of ['*', '>', 'w_*', `${payer.id}.x`]) {
    assert.is((await reserve(stack, walletId, '1000000', 'p_wild')).status, 400, walletId);
  }
  const { reservation } = (await reserve(stack, payer.id, '1000000', 'p_wild')).body;
  const credits = [{ walletId: '>', amount: usd(1000000) }];
  assert.is((await call(stack, 'POST', `${PATH}/${reservation.id}/settle`, { activityState: 'SETTLED', debit: usd(1000000), credits, reference: 'r' }, internal)).status, 400);
  assert.is((await reserve(stack, payer.id, '1000000', 'p_empty_key', { 'idempotency-key': '' })).status, 400);

  const expiring = (await call(stack, 'POST', PATH, { walletId: payer.id, amount: usd(1000000), activity: { kind: 'pact', pactId: 'p_expiry', party: 'ed25519:buyer', role: 'buyer' }, expiresAt: new Date(Date.now() + 60 * 60_000).toISOString() }, internal)).body.reservation;
  await call(stack, 'POST', '/__test/clock', { advanceMs: 2 * 60 * 60_000 });
  const expired = (await call(stack, 'GET', `${PATH}/${expiring.id}`, undefined, internal)).body.reservation;
  assert.equal([expired.status, expired.released, expired.finalizedAt === null], ['expired', usd(1000000), false], JSON.stringify(expired));
  assert.equal(await balances(stack, payer), ['2000000', '1000000', '1000000'], 'only p_wild still holds');
  const late = await call(stack, 'POST', `${PATH}/${expiring.id}/settle`, { activityState: 'SETTLED', debit: usd(0), credits: [], reference: 'late' }, internal);
  assert.is(late.status, 409);
  assert.is(late.body.reservation.status, 'expired');
  const release = await call(stack, 'POST', `${PATH}/${expiring.id}/release`, { reason: 'expired' }, internal);
  assert.equal([release.status, release.body.error], [409, 'reservation_not_held']);
  const { items } = (await call(stack, 'GET', '/v1/me', undefined, payer.auth)).body.ledger;
  assert.equal(items.slice(0, 2).map((item: { type: string; amount: { amount: string } }) => [item.type, item.amount.amount]), [['hold_release', '1000000'], ['hold', '-1000000']]);
});

test('reservation answers fit the OpenAPI document', async ({ stack }) => {
  const fits = await documentFits(stack);
  const payer = await fundedWallet(stack, '1000000');
  const held = await reserve(stack, payer.id, '1000', 'p_documented');
  fits('POST', PATH, held, 201);
  fits('POST', PATH, await reserve(stack, payer.id, '1000', 'p_documented'), 200);
  fits('POST', PATH, await reserve(stack, payer.id, '2000000', 'p_too_much'), 402);
  const id = held.body.reservation.id;
  fits('GET', `${PATH}/{id}`, await call(stack, 'GET', `${PATH}/${id}`, undefined, internal), 200);
  fits('POST', `${PATH}/{id}/settle`, await call(stack, 'POST', `${PATH}/${id}/settle`, { activityState: 'SETTLED', debit: usd(0), credits: [], reference: 'r' }, internal), 200);
  fits('POST', `${PATH}/{id}/release`, await call(stack, 'POST', `${PATH}/${id}/release`, {}, internal), 409);
  fits('GET', `${PATH}/{id}`, await call(stack, 'GET', `${PATH}/rsv_nothing`, undefined, internal), 404);
});

test('refused: an expiresAt Date cannot hold (a leap second), a credit to the payer itself; an expired hold is 409 before any payee check, and a late release ends it as expired', async ({ stack }) => {
  const payer = await fundedWallet(stack, '3000000');
  const body = (pactId: string, expiresAt: string) => ({ walletId: payer.id, amount: usd(1000000), activity: { kind: 'pact', pactId, party: 'ed25519:buyer', role: 'buyer' }, expiresAt });
  const leap = await call(stack, 'POST', PATH, body('p_leap', '2030-06-30T23:59:60Z'), internal);
  assert.equal([leap.status, leap.body.error, leap.body.field], [400, 'invalid_request', 'expiresAt']);
  assert.equal(await balances(stack, payer), ['3000000', '0', '3000000'], 'nothing held');

  const { reservation } = (await reserve(stack, payer.id, '1000000', 'p_self')).body;
  const self = await call(stack, 'POST', `${PATH}/${reservation.id}/settle`, { activityState: 'SETTLED', debit: usd(1000), credits: [{ walletId: payer.id, amount: usd(1000) }], reference: 'r' }, internal);
  assert.equal([self.status, self.body.field], [400, 'credits']);

  const { now } = (await call(stack, 'POST', '/__test/clock', {})).body;
  const soon = (await call(stack, 'POST', PATH, body('p_soon', new Date(now + 60_000).toISOString()), internal)).body.reservation;
  // Past its expiry through the escrow's clock hook (the one clock), which does not run the wallet's keeper: the hold
  // has lapsed, and the keeper may or may not have ended it yet; either way it is no longer held.
  await stack.client.request('POST', '/__test/clock', { advanceMs: 61_000 });
  const unknownPayee = await call(stack, 'POST', `${PATH}/${soon.id}/settle`, { activityState: 'SETTLED', debit: usd(1), credits: [{ walletId: 'w_1111111111111111111111', amount: usd(1) }], reference: 'r' }, internal);
  assert.equal([unknownPayee.status, unknownPayee.body.error], [409, 'reservation_not_held']);
  const late = await call(stack, 'POST', `${PATH}/${soon.id}/release`, {}, internal);
  assert.equal([late.status, late.body.error, late.body.reservation.status, late.body.reservation.released], [409, 'reservation_not_held', 'expired', usd(1000000)]);
  assert.equal(await balances(stack, payer), ['3000000', '1000000', '2000000'], 'only p_self still holds');
});

test('release gives the whole hold back once; a repeat replays; settle after it is 409', async ({ stack }) => {
  const payer = await fundedWallet(stack, '3000000');
  const { reservation } = (await reserve(stack, payer.id, '2000000', 'p_release')).body;
  const released = await call(stack, 'POST', `${PATH}/${reservation.id}/release`, { reason: 'withdrawn' }, internal);
  assert.is(released.status, 200);
  assert.is(released.body.reservation.status, 'released');
  assert.equal(released.body.reservation.released, usd(2000000));
  assert.is((await call(stack, 'POST', `${PATH}/${reservation.id}/release`, undefined, internal)).status, 200);
  const settle = await call(stack, 'POST', `${PATH}/${reservation.id}/settle`, { activityState: 'SETTLED', debit: usd(0), credits: [], reference: 'x' }, internal);
  assert.is(settle.status, 409);
  assert.equal(await balances(stack, payer), ['3000000', '0', '3000000']);
  assert.is((await call(stack, 'GET', `${PATH}/rsv_nosuchreservation12345678`, undefined, internal)).status, 404);
});

test('300 reservations at one wallet from many connections: no overspend; 200 settles, each sent twice: paid once; the books balance', async ({ stack }) => {
  const payer = await fundedWallet(stack, '100000000'); // 100 USD
  const payee = await fundedWallet(stack, '0');
  const attempts = await Promise.all(Array.from({ length: 150 }, (_, i) => reserve(stack, payer.id, '1000000', `p_burst_${i}`)));
  const held = attempts.filter((a) => a.status === 201);
  assert.is(held.length, 100, JSON.stringify(attempts.filter((a) => a.status !== 201 && a.status !== 402).slice(0, 3).map((a) => a.body)));
  assert.is(attempts.filter((a) => a.status === 402).length, 50);
  assert.equal(await balances(stack, payer), ['100000000', '100000000', '0']);
  const settle = (id: string) => call(stack, 'POST', `${PATH}/${id}/settle`, { activityState: 'SETTLED', debit: usd(1000000), credits: [{ walletId: payee.id, amount: usd(1000000) }], reference: id }, internal);
  const settles = await Promise.all(held.flatMap(({ body }) => [settle(body.reservation.id), settle(body.reservation.id)]));
  assert.ok(settles.every((s) => s.status === 200), JSON.stringify(settles.filter((s) => s.status !== 200).slice(0, 3).map((s) => s.body)));
  assert.equal(await balances(stack, payer), ['0', '0', '0']);
  assert.equal(await balances(stack, payee), ['100000000', '0', '100000000']);
  const entries = [...(await call(stack, 'GET', '/v1/me?limit=100', undefined, payee.auth)).body.ledger.items];
  assert.is(entries.length, 100);
});

test('kill -9 during a burst of settles: after the restart every settle, sent again, applies once; nothing acknowledged is lost', async ({ stack }) => {
  const payer = await fundedWallet(stack, '50000000');
  const payee = await fundedWallet(stack, '0');
  const ids: string[] = [];
  for (let i = 0; i < 50; i++) ids.push((await reserve(stack, payer.id, '1000000', `p_crash_${i}`)).body.reservation.id);
  const settle = (id: string) =>
    call(stack, 'POST', `${PATH}/${id}/settle`, { activityState: 'SETTLED', debit: usd(600000), credits: [{ walletId: payee.id, amount: usd(600000) }], reference: id }, internal).catch(() => ({ status: 0, body: undefined }));
  const burst = Promise.all(ids.map(settle));
  await new Promise((resolve) => setTimeout(resolve, 60));
  await stack.kill('SIGKILL');
  const answered = (await burst).filter((answer) => answer.status === 200).length;
  await stack.restartWith({});
  const again = await Promise.all(ids.map(settle));
  assert.ok(again.every((answer) => answer.status === 200), JSON.stringify(again.filter((a) => a.status !== 200).slice(0, 3)));
  // 50 reservations of 1 USD, each settled once for 0.60 USD: 30 USD to the payee, 20 USD back to the payer
  assert.equal(await balances(stack, payer), ['20000000', '0', '20000000']);
  assert.equal(await balances(stack, payee), ['30000000', '0', '30000000']);
  assert.ok(answered < 50, 'the kill came after every settle was answered: the test proved nothing');
});

test.run();
