// `pact.settlement.v1` (DECISIONS.md, Agent Stream): the fraction of a party's terminal pacts that SETTLED
// without it forfeiting a bond; no history is 0.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact } from '../../machines/pact/types.js';
import { isTerminal, reputationOf, settledWell } from '../../stream/reputation.js';
import { partyKey } from '../support/pacts.js';

const a = partyKey(1).party;
const b = partyKey(2).party;
const pact = (state: Pact['state'], bondForfeits: { party: string; amount: string }[] = []) =>
  ({ state, settlement: { bondForfeits } }) as unknown as Pact;

test('settled without a forfeit is good; a forfeit, or a cancellation, is not', () => {
  assert.ok(settledWell(pact('SETTLED'), a));
  assert.not.ok(settledWell(pact('SETTLED', [{ party: a, amount: '50' }]), a));
  assert.ok(settledWell(pact('SETTLED', [{ party: a, amount: '50' }]), b), 'the other party did not forfeit');
  assert.ok(settledWell(pact('SETTLED', [{ party: a, amount: '0' }]), a), 'a zero bond forfeits nothing');
  assert.not.ok(settledWell(pact('CANCELLED'), a));
});

test('the fraction of terminal pacts; 0 without history', () => {
  assert.is(reputationOf(undefined), 0);
  assert.is(reputationOf({ terminal: 0, good: 0 }), 0);
  assert.is(reputationOf({ terminal: 4, good: 3 }), 0.75);
  assert.ok(isTerminal('SETTLED') && isTerminal('CANCELLED') && !isTerminal('DISPUTED'));
});

test.run();
