import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { collectKey, collectStanding, parseCollectKey } from '../../machines/pact/collects.js';
import { evolve } from '../../machines/pact/evolve.js';
import type { Pact } from '../../machines/pact/types.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

const a = generateKeyPair();
const b = generateKeyPair();
const fresh = () => ({ ...pactFrom(twoPartySpec(a, b)), id: 'p_0123456789abcdef0123456789abcdef' });
const fund = (pact: Pact, party = b.party, receipt = 'r-b') => evolve(pact, { type: 'fund', at: pact.updatedAt + 1, party, receipt })!;

test('a collect key names the pact, the funding round and the party, and parses back', () => {
  const pact = fresh();
  const key = collectKey(pact.id, pact.parties[1]!);
  assert.is(key, `${pact.id}:fund.0:${b.party}`);
  assert.equal(parseCollectKey(key), { pactId: pact.id, round: 0, party: b.party });
  assert.is(parseCollectKey(`${pact.id}:settle.4:pot:${b.party}`), undefined);
  assert.is(parseCollectKey(`${pact.id}:fund.0:mallory`), undefined);
});

const activeWith = (pact: Pact) => fund(fund(pact, a.party, 'r-a'));

test('a collect the pact recorded is accounted for', () => {
  assert.is(collectStanding(activeWith(fresh()), 0, b.party, 'r-b'), 'accounted');
});

test('an unrecorded collect stays open while the pact takes funds, then is orphaned', () => {
  const pact = fresh();
  assert.is(collectStanding(pact, 0, b.party, 'r-lost'), 'open');
  const cancelled = evolve(pact, { type: 'poke', at: pact.fundBy })!;
  assert.is(cancelled.state, 'CANCELLED');
  assert.is(collectStanding(cancelled, 0, b.party, 'r-lost'), 'orphaned');
});

test('in CREATED nothing is orphaned, even judged on a record older than the journal', () => {
  // the read model still shows round 0 funded; the journal already has the withdrawal and round 1 funded
  const stale = fund(fresh());
  assert.is(collectStanding(stale, 1, b.party, 'r-round-1'), 'open');
});

test('a round that ended in a withdrawal was refunded by the withdrawal, not by the reconciler', () => {
  const funded = fund(fresh());
  const withdrawn = evolve(funded, { type: 'withdraw', at: funded.updatedAt + 1, party: b.party })!;
  const cancelled = evolve(withdrawn, { type: 'poke', at: withdrawn.fundBy })!;
  assert.is(collectStanding(cancelled, 0, b.party, 'r-b'), 'accounted');
  assert.is(collectStanding(cancelled, 1, b.party, 'r-next'), 'orphaned');
});

test('a collect by a party dropped at activation is orphaned', () => {
  const active = activeWith(fresh());
  const dropped = { ...active, parties: active.parties.slice(0, 1) };
  assert.is(collectStanding(dropped, 0, b.party, 'r-b'), 'orphaned');
});

test.run();
