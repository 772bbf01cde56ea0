import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evolve } from '../../machines/pact/evolve.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

const a = generateKeyPair();
const b = generateKeyPair();

test('cosign lifecycle settles with payouts that add up', () => {
  let pact = pactFrom(twoPartySpec(a, b));
  pact = evolve(pact, { type: 'fund', at: 1_000_001, party: a.party, receipt: 'r1' })!;
  assert.is(pact.state, 'CREATED');
  pact = evolve(pact, { type: 'fund', at: 1_000_002, party: b.party, receipt: 'r2' })!;
  assert.is(pact.state, 'ACTIVE');
  pact = evolve(pact, {
    type: 'propose', at: 1_000_003, party: a.party,
    proposal: { evidence: [{ note: 'done' }], distribution: [{ party: a.party, bp: 9000 }, { party: b.party, bp: 1000 }] },
  })!;
  assert.is(pact.state, 'PROPOSED');
  assert.ok(pact.inputHash);
  pact = evolve(pact, { type: 'cosign', at: 1_000_004, party: b.party })!;
  assert.is(pact.state, 'SETTLED');
  assert.is(pact.stateNonce, 4);
  const total = pact.payouts.reduce((s, p) => s + BigInt(p.amount), 0n);
  assert.is(total, 1200n);
  assert.is(evolve(pact, { type: 'cosign', at: 1_000_005, party: b.party }), undefined);
});

test.run();
