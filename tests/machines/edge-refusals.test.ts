// Edge cases of refusal that the first machine version got wrong: bp values a schema would stop but the
// machine must refuse on its own, check order for already_funded / already_cosigned, and a verdict's pactId.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { refusal } from '../../machines/pact/decide.js';
import { evolve } from '../../machines/pact/evolve.js';
import type { Share } from '../../machines/pact/types.js';
import { ERROR_STATUS } from '../../protocol/errors.js';
import { cmd, ev, fundAll, pactFrom, partyKey, run, T0, twoPartySpec, verdictBody } from '../support/pacts.js';

const a = partyKey(1); // proposer
const b = partyKey(2);
const active = () => fundAll(pactFrom(twoPartySpec(a, b)));
const NEGATIVE: Share[] = [{ party: a.party, bp: 15000 }, { party: b.party, bp: -5000 }];
const FRACTIONAL: Share[] = [{ party: a.party, bp: 3333.5 }, { party: b.party, bp: 6666.5 }];

// DECISIONS.md "Money, bonds, fees": "`bp` values are integers, sum to 10000, name only pact parties, no duplicates."
// A negative share lets the rest exceed the pot: here a would get 1500 out of a pot of 1000.
test('the machine refuses a distribution with a negative bp', () => {
  assert.is(evolve(active(), ev.propose(a.party, T0 + 10, NEGATIVE))?.state, undefined);
});

// Same rule; a fractional bp passes the sum check, then splitPot's BigInt() throws when the pact settles.
test('the machine refuses a distribution with a fractional bp', () => {
  assert.is(evolve(active(), ev.propose(a.party, T0 + 10, FRACTIONAL))?.state, undefined);
});

test('refusal() answers invalid_request (400) for negative or fractional bp', () => {
  const pact = active();
  for (const shares of [NEGATIVE, FRACTIONAL]) {
    const error = refusal(pact, cmd.propose(a.party, 2, shares), T0 + 10);
    assert.is(error?.error, 'invalid_request', JSON.stringify(shares));
    assert.is(ERROR_STATUS[error!.error], 400);
  }
});

// DECISIONS.md "Fund and rails": "A second fund by a confirmed party: 409 already_funded." (listed as final in
// "Errors"). After the fund that activated the pact, a retry by the same party gets invalid_state instead.
test('a second fund by a confirmed party after activation is already_funded', () => {
  const pact = active();
  assert.is(refusal(pact, cmd.fund(b.party, pact.stateNonce), T0 + 10)?.error, 'already_funded');
});

// DECISIONS.md "Lifecycle points": "Objecting after cosigning: 409 already_cosigned." In a two-party pact the
// cosign settles the pact, and the objection then gets invalid_state (the state check runs first).
test('objecting after one’s own cosign settled the pact is already_cosigned', () => {
  const settled = run(active(), ev.propose(a.party, T0 + 10, [{ party: a.party, bp: 10000 }]), ev.cosign(b.party, T0 + 11));
  assert.is(refusal(settled, cmd.object(b.party, settled.stateNonce), T0 + 12)?.error, 'already_cosigned');
});

// A verdict names its pact (DECISIONS.md "Verdict": body `{ pactId, inputHash, ... }`), but neither refusal() nor the
// machine compares `pactId`. inputHash covers only { terms, proposer, evidence, distribution }, so two pacts from
// the same offer template with the same proposal share it, and a verdict signed for one applies to the other.
test('a verdict signed for another pact is refused', () => {
  const disputedPact = (id: string) => run({ ...active(), id }, ev.propose(a.party, T0 + 10, [{ party: a.party, bp: 10000 }]), ev.object(b.party, T0 + 11));
  const x = disputedPact('p_x');
  const y = disputedPact('p_y');
  assert.is(x.inputHash, y.inputHash);
  const forX = verdictBody(x, T0 + 12, [{ party: a.party, bp: 10000 }], 'objector');
  assert.ok(refusal(y, cmd.verdict(forX), T0 + 12), 'verdict for p_x accepted on p_y');
});

test.run();
