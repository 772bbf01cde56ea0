import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { nextCheckout } from '../../machines/wallet/checkout-machine.js';
import { nextExecution } from '../../machines/wallet/execution-machine.js';
import { nextReservation } from '../../machines/wallet/reservation-machine.js';
import type { Checkout, Execution, Reservation, Settlement } from '../../machines/wallet/types.js';

// The lifecycles inside a wallet: a hold ends once (settled in time and within its amount, released, or expired),
// a checkout is paid once, with money taken before it expired, an execution ends once (a lost one only by reconciling).

const test = suite('reservation and checkout machines');

const T0 = 1_800_000_000_000;
const hold: Reservation = { id: 'rsv_1', amount: '1000', status: 'held', activity: { kind: 'pact', pactId: 'p_1', party: 'a', role: 'funder' }, memo: null, bodyHash: 'h', createdAt: T0, expiresAt: T0 + 1_000, finalizedAt: null, settlement: null, releaseReason: null, ledgerTxIds: ['tx_hold'] };
const settlement = (debit: string, credits: string[] = [debit]): Settlement => ({ activityState: 'SETTLED', debit, credits: credits.map((amount, i) => ({ walletId: `w_${i}`, amount })), reference: 'r', bodyHash: 'b' });
const settle = (at: number, value = settlement('600')) => ({ type: 'settle' as const, at, settlement: value, transactionId: 'tx_end' });

test('a hold settles before it lapses, for at most its amount, with credits adding up to the debit', () => {
  const settled = nextReservation(hold, settle(T0 + 10))!;
  assert.equal([settled.status, settled.finalizedAt, settled.settlement?.debit, settled.ledgerTxIds], ['settled', T0 + 10, '600', ['tx_hold', 'tx_end']]);
  assert.is(nextReservation(hold, settle(T0 + 1_000)), undefined, 'at expiresAt it has lapsed');
  assert.is(nextReservation(hold, settle(T0 + 10, settlement('1001'))), undefined, 'more than held');
  assert.is(nextReservation(hold, settle(T0 + 10, settlement('600', ['500']))), undefined, 'credits short of the debit');
  assert.ok(nextReservation(hold, settle(T0 + 10, settlement('0', []))), 'a debit of 0');
});

test('release any time; expiry only once lapsed; every end is final', () => {
  const released = nextReservation(hold, { type: 'release', at: T0 + 5_000, reason: 'done', transactionId: 'tx_r' })!;
  assert.equal([released.status, released.releaseReason], ['released', 'done']);
  assert.is(nextReservation(hold, { type: 'expire', at: T0 + 999, transactionId: 'tx_e' }), undefined);
  const expired = nextReservation(hold, { type: 'expire', at: T0 + 1_000, transactionId: 'tx_e' })!;
  assert.equal([expired.status, expired.releaseReason], ['expired', 'expired']);
  const settled = nextReservation(hold, settle(T0 + 10))!;
  for (const ended of [released, expired, settled]) {
    assert.is(nextReservation(ended, settle(T0 + 20)), undefined);
    assert.is(nextReservation(ended, { type: 'release', at: T0 + 20, reason: null, transactionId: 'x' }), undefined);
    assert.is(nextReservation(ended, { type: 'expire', at: T0 + 2_000, transactionId: 'x' }), undefined);
  }
});

test('a checkout is paid once, with money taken before it expired', () => {
  const open: Checkout = { id: 'co_1', amount: '5', status: 'open', createdAt: T0, expiresAt: T0 + 100, completedAt: null, successUrl: null, cancelUrl: null, paidWith: null };
  const pay = (at: number, paidAt = at) => ({ type: 'pay' as const, at, paidAt, rail: 'mock', ref: 'm1' });
  const paid = nextCheckout(open, pay(T0 + 50))!;
  assert.equal([paid.status, paid.completedAt, paid.paidWith], ['completed', T0 + 50, { rail: 'mock', ref: 'm1' }]);
  assert.is(nextCheckout(paid, pay(T0 + 60)), undefined);
  assert.is(nextCheckout(open, pay(T0 + 100)), undefined, 'taken at expiry');
  assert.ok(nextCheckout(open, pay(T0 + 500, T0 + 99)), 'taken in time, recorded later');
  assert.is(nextCheckout(open, pay(T0 + 50, T0 + 60)), undefined, 'recorded before it was taken');
});

const PENDING: Execution = { id: 'ex_1', capabilityId: 'test.echo', rail: 'http', provider: { registryId: null, resource: 'test:echo', method: 'POST' }, status: 'pending', quoted: '1000', reserved: '1000', charged: '0', released: '0', inputHash: 'i', outputHash: null, providerPayment: null, authorization: null, error: null, receiptId: 'rc_1', createdAt: T0, finishedAt: null, ledgerTxIds: ['tx_h'] };

test('an execution is charged at most what it holds and fails with all of it back; an unpaid one is never lost', () => {
  const succeed = (charged: string) => ({ type: 'succeed' as const, at: T0 + 5, charged, outputHash: 'o', providerPayment: null, transactionId: 'tx_c' });
  const done = nextExecution(PENDING, succeed('1000'))!;
  assert.equal([done.status, done.charged, done.released, done.ledgerTxIds], ['succeeded', '1000', '0', ['tx_h', 'tx_c']]);
  assert.is(nextExecution(PENDING, succeed('1001')), undefined, 'more than held');
  const failed = nextExecution(PENDING, { type: 'fail', at: T0 + 5, reason: 'down', transactionId: 'tx_r' })!;
  assert.equal([failed.status, failed.charged, failed.released, failed.error], ['failed', '0', '1000', 'down']);
  assert.is(nextExecution(PENDING, { type: 'lose', at: T0 + 5, reason: 'timeout' }), undefined, 'nothing was signed: nothing can be lost');
  for (const ended of [done, failed]) assert.is(nextExecution(ended, { type: 'fail', at: T0 + 9, reason: 'x', transactionId: 'y' }), undefined);
});

test('a paid execution: signed within its hold; lost, it ends only by reconciling, charged exactly what was signed or released whole', () => {
  const authorization = { network: 'eip155:84532', asset: '0xt', from: '0xf', to: '0xp', nonce: '0xn', value: '600', charged: '600', validBefore: 1, fromBlock: '7' };
  assert.is(nextExecution(PENDING, { type: 'pay', authorization: { ...authorization, charged: '1001' } }), undefined, 'more than held');
  assert.is(nextExecution(PENDING, { type: 'pay', authorization: { ...authorization, charged: '0' } }), undefined, 'nothing to pay');
  const paying = nextExecution(PENDING, { type: 'pay', authorization })!;
  assert.equal([paying.status, paying.authorization], ['paying', authorization]);
  assert.is(nextExecution(paying, { type: 'pay', authorization }), undefined, 'signed once');
  assert.is(nextExecution(paying, { type: 'fail', at: T0 + 5, reason: 'refused', transactionId: 'tx_r' }), undefined, 'a signed payment may still be taken: never given back on the word of the provider');
  assert.is(nextExecution(paying, { type: 'succeed', at: T0 + 5, charged: '1000', outputHash: 'o', providerPayment: null, transactionId: 'tx' }), undefined, 'an answer is charged what was signed');
  assert.equal(nextExecution(paying, { type: 'succeed', at: T0 + 5, charged: '600', outputHash: 'o', providerPayment: null, transactionId: 'tx' })!.released, '400');
  const lost = nextExecution(paying, { type: 'lose', at: T0 + 5, reason: 'timeout' })!;
  assert.equal([lost.status, lost.charged, lost.finishedAt], ['ambiguous', '0', null]);
  assert.is(nextExecution(lost, { type: 'lose', at: T0 + 6, reason: 'again' }), undefined);
  assert.is(nextExecution(lost, { type: 'succeed', at: T0 + 6, charged: '600', outputHash: 'o', providerPayment: null, transactionId: 'tx' })!.status, 'succeeded', 'an answer that outlived the cut-off');
  assert.is(nextExecution(lost, { type: 'succeed', at: T0 + 6, charged: '1000', outputHash: 'o', providerPayment: null, transactionId: 'tx' }), undefined, 'charged what was signed');
  const unanswered = (charged: string) => ({ type: 'chargeUnanswered' as const, at: T0 + 7, charged, reason: 'taken', providerPayment: { reference: '0xr' }, transactionId: 'tx_c' });
  assert.is(nextExecution(lost, unanswered('1000')), undefined, 'charged what was signed, no more');
  const taken = nextExecution(lost, unanswered('600'))!;
  assert.equal([taken.status, taken.charged, taken.released, taken.outputHash, taken.error], ['unanswered', '600', '400', null, 'taken']);
  assert.is(nextExecution(lost, { type: 'fail', at: T0 + 7, reason: 'refused', transactionId: 'tx_r' }), undefined, 'released only once lapsed');
  assert.is(nextExecution(PENDING, { type: 'lapse', at: T0 + 7, reason: 'lapsed', transactionId: 'tx_r' }), undefined, 'nothing signed: nothing lapses');
  const lapsed = nextExecution(lost, { type: 'lapse', at: T0 + 7, reason: 'lapsed', transactionId: 'tx_r' })!;
  assert.equal([lapsed.status, lapsed.charged, lapsed.released], ['failed', '0', '1000']);
  assert.is(nextExecution(PENDING, unanswered('600')), undefined, 'nothing signed: nothing taken');
  for (const ended of [taken, lapsed]) assert.is(nextExecution(ended, { type: 'fail', at: T0 + 9, reason: 'x', transactionId: 'y' }), undefined);
});

test.run();
