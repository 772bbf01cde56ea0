import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { evolve } from '../../machines/wallet/evolve.js';
import type { Wallet } from '../../machines/wallet/types.js';

const test = suite('wallet machine');

const T0 = 1_800_000_000_000;
const fresh = (): Wallet => ({
  id: 'w_test',
  status: 'pending_pairing',
  label: null,
  ownerEmail: null,
  balance: '0',
  held: '0',
  pairing: { id: 'pr_test', expiresAt: T0 + 900_000, claimedAt: null },
  accessTokenHash: null,
  checkouts: {},
  reservations: {},
  creditsReceived: {},
  createdAt: T0,
  updatedAt: T0,
  version: 1,
});
const paired = (at: number, pairingId = 'pr_test') => ({ type: 'paired' as const, at, pairingId, accessTokenHash: 'h1' });

test('created makes a wallet once', () => {
  assert.equal(evolve(undefined, { type: 'created', at: T0, wallet: fresh() }), fresh());
  assert.is(evolve(fresh(), { type: 'created', at: T0, wallet: fresh() }), undefined);
  assert.is(evolve(undefined, paired(T0)), undefined);
});

test('paired, within the pairing’s time, makes it active with the access hash, once', () => {
  const active = evolve(fresh(), paired(T0 + 1_000))!;
  assert.is(active.status, 'active');
  assert.is(active.accessTokenHash, 'h1');
  assert.is(active.pairing.claimedAt, T0 + 1_000);
  assert.is(active.version, 2);
  assert.is(active.updatedAt, T0 + 1_000);
  assert.is(evolve(active, paired(T0 + 2_000)), undefined);
});

test('paired is refused at or after expiry, and for another pairing', () => {
  assert.is(evolve(fresh(), paired(T0 + 900_000)), undefined);
  assert.is(evolve(fresh(), paired(T0 + 1_000, 'pr_other')), undefined);
});

const checkout = { id: 'co_test', amount: '5000000', status: 'open' as const, createdAt: T0, expiresAt: T0 + 1_800_000, completedAt: null, successUrl: null, cancelUrl: null, paidWith: null };
const activeWallet = () => evolve(evolve(fresh(), paired(T0 + 1))!, { type: 'checkoutOpened', at: T0 + 2, checkout })!;
const payment = (at: number, credit = '5000000', legs = [{ account: 'system:funding', amount: `-${credit}` }, { account: 'wallet:w_test:available', amount: credit }], paidAt = at) => ({
  type: 'checkoutPaid' as const,
  at,
  paidAt,
  checkoutId: 'co_test',
  rail: 'mock',
  ref: 'mock_1',
  transaction: { id: 'tx_1', legs },
  entry: { id: 'le_1', type: 'topup' as const, amount: credit, balanceAfter: credit, availableAfter: credit, reference: { kind: 'checkout', id: 'co_test' }, transactionId: 'tx_1', createdAt: at },
});

test('a paid checkout credits its amount once, before it expires, with a balanced transaction', () => {
  const credited = evolve(activeWallet(), payment(T0 + 10))!;
  assert.is(credited.balance, '5000000');
  assert.is(credited.checkouts.co_test!.status, 'completed');
  assert.is(evolve(credited, payment(T0 + 11)), undefined); // once
  assert.is(evolve(activeWallet(), payment(T0 + 1_800_000)), undefined); // paid after it expired
  assert.ok(evolve(activeWallet(), payment(T0 + 1_900_000, '5000000', undefined, T0 + 1_799_999))); // paid in time, recorded after
  assert.is(evolve(activeWallet(), payment(T0 + 10, '5000000', [{ account: 'system:funding', amount: '-5000000' }, { account: 'wallet:w_other:available', amount: '5000000' }])), undefined); // another wallet's credit
  assert.is(evolve(activeWallet(), payment(T0 + 10, '6000000')), undefined); // not the checkout's amount
  assert.is(evolve(activeWallet(), payment(T0 + 10, '5000000', [{ account: 'wallet:w_test:available', amount: '5000000' }])), undefined); // unbalanced
  assert.is(evolve(fresh(), { type: 'checkoutOpened', at: T0, checkout }), undefined); // a pending wallet opens none
});

const reservation = { id: 'rsv_test', amount: '2000000', status: 'held' as const, activity: { kind: 'pact' as const, pactId: 'p_1', party: 'ed25519:a', role: 'funder' }, memo: null, bodyHash: 'h', createdAt: T0 + 20, expiresAt: T0 + 60_000, finalizedAt: null, settlement: null, releaseReason: null, ledgerTxIds: [] };
const holdLegs = (amount: string) => [{ account: 'wallet:w_test:available', amount: `-${amount}` }, { account: 'wallet:w_test:held', amount }];
const entry = (type: 'hold' | 'hold_release', amount: string, at: number) => ({ id: `le_${type}`, type, amount, balanceAfter: '5000000', availableAfter: '0', reference: { kind: 'reservation', id: 'rsv_test' }, transactionId: 'tx', createdAt: at });
const holding = () => evolve(evolve(activeWallet(), payment(T0 + 10))!, { type: 'reserved', at: T0 + 20, reservation, transaction: { id: 'tx_h', legs: holdLegs('2000000') }, entry: entry('hold', '-2000000', T0 + 20) })!;
const expiry = (at: number) => ({ type: 'reservationExpired' as const, at, reservationId: 'rsv_test', transaction: { id: 'tx_e', legs: holdLegs('2000000').map((leg) => ({ ...leg, amount: leg.amount.startsWith('-') ? leg.amount.slice(1) : `-${leg.amount}` })) }, entry: entry('hold_release', '2000000', at) });

test('a hold expires only at or after its expiresAt, once: the credit is available again', () => {
  const held = holding();
  assert.is(held.held, '2000000');
  assert.is(evolve(held, expiry(T0 + 59_999)), undefined); // not yet
  const expired = evolve(held, expiry(T0 + 60_000))!;
  assert.equal([expired.held, expired.balance, expired.reservations.rsv_test!.status, expired.reservations.rsv_test!.finalizedAt], ['0', '5000000', 'expired', T0 + 60_000]);
  assert.is(evolve(expired, expiry(T0 + 70_000)), undefined); // once
  const released = evolve(held, { ...expiry(T0 + 30_000), type: 'reservationReleased', reason: null })!;
  assert.is(evolve(released, expiry(T0 + 70_000)), undefined); // a released hold does not expire
});

test.run();
