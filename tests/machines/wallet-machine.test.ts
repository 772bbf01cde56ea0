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

test.run();
