// Events the machine must refuse: `evolve` returns undefined and nothing changes.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PactEvent, PactEventType } from '../../machines/pact/events.js';
import { evolve } from '../../machines/pact/evolve.js';
import { PACT_STATES, type Pact, type PactState, type Share } from '../../machines/pact/types.js';
import {
  ev, feeRecipient, fundAll, pactFrom, partyKey, run, T0, threePartySpec, twoPartySpec,
} from '../support/pacts.js';

const a = partyKey(1); // proposer
const b = partyKey(2);
const c = partyKey(3);
const outsider = partyKey(9);
const FULL: Share[] = [{ party: a.party, bp: 4000 }, { party: b.party, bp: 6000 }];

const created = () => run(pactFrom(twoPartySpec(a, b)), ev.fund(a.party, T0 + 1));
const active = () => fundAll(pactFrom(twoPartySpec(a, b)));
const proposed = () => run(active(), ev.propose(a.party, T0 + 10, FULL));
const disputed = () => run(proposed(), ev.object(b.party, T0 + 20));
const byState: Record<PactState, () => Pact> = {
  CREATED: created,
  ACTIVE: active,
  PROPOSED: proposed,
  DISPUTED: disputed,
  SETTLED: () => run(proposed(), ev.cosign(b.party, T0 + 30)),
  CANCELLED: () => run(active(), ev.poke(active().performBy!)),
};
const threeProposed = () => run(fundAll(pactFrom(threePartySpec(a, b, c))), ev.propose(a.party, T0 + 10, [{ party: a.party, bp: 10000 }]));

/** One plausible event of each signed type, valid in the state that allows it. */
function candidates(pact: Pact): Record<Exclude<PactEventType, 'poke' | 'payoutsRecorded'>, PactEvent> {
  const at = pact.updatedAt + 1;
  return {
    fund: ev.fund(b.party, at),
    withdraw: ev.withdraw(a.party, at),
    propose: ev.propose(a.party, at, FULL),
    cosign: ev.cosign(b.party, at),
    object: ev.object(b.party, at),
    cancel: ev.cancel(a.party, at, [a.party, b.party], at + 1),
    verdict: ev.verdict(pact, at, FULL, 'objector'),
  };
}
const allowed: Record<PactState, string[]> = {
  CREATED: ['fund', 'withdraw'],
  ACTIVE: ['propose', 'cancel'],
  PROPOSED: ['cosign', 'object', 'cancel'],
  DISPUTED: ['verdict'],
  SETTLED: [],
  CANCELLED: [],
};

/** Asserts that `event` is refused and leaves `pact` as it was. */
function refused(pact: Pact, event: PactEvent, why: string = event.type) {
  const before = structuredClone(pact);
  assert.is(evolve(pact, event), undefined, `${why} accepted in ${pact.state}`);
  assert.equal(pact, before);
}

for (const state of PACT_STATES) {
  test(`${state}: each event type is accepted only where the table allows it`, () => {
    const pact = byState[state]();
    assert.is(pact.state, state);
    for (const [type, event] of Object.entries(candidates(pact))) {
      if (allowed[state].includes(type)) assert.ok(evolve(pact, event), `${type} refused in ${state}`);
      else refused(pact, event);
    }
  });
}

test('SETTLED and CANCELLED ignore pokes however late', () => {
  refused(byState.SETTLED(), ev.poke(T0 + 10 ** 12));
  refused(byState.CANCELLED(), ev.poke(T0 + 10 ** 12));
});

test('a poke before the current deadline is not a transition in any live state', () => {
  for (const state of ['CREATED', 'ACTIVE', 'PROPOSED', 'DISPUTED'] as const) {
    const pact = byState[state]();
    const deadline = { CREATED: pact.fundBy, ACTIVE: pact.performBy, PROPOSED: pact.objectBy, DISPUTED: pact.verdictBy }[state]!;
    refused(pact, ev.poke(deadline - 1), `poke in ${state}`);
    assert.ok(evolve(pact, ev.poke(deadline)), `poke at the deadline refused in ${state}`);
  }
});

test('fund: refused for a non-party, a second time, and from fundBy on', () => {
  const pact = created();
  refused(pact, ev.fund(outsider.party, T0 + 2), 'fund by an outsider');
  refused(pact, ev.fund(a.party, T0 + 2), 'second fund');
  refused(pact, ev.fund(b.party, pact.fundBy), 'fund at fundBy');
  refused(pact, ev.fund(b.party, pact.fundBy + 1), 'fund after fundBy');
  assert.ok(evolve(pact, ev.fund(b.party, pact.fundBy - 1)));
});

test('fund: refused for an optional party dropped at activation', () => {
  const spec = threePartySpec(a, b, c, { minParties: 2 });
  spec.parties[2] = { ...spec.parties[2]!, required: false };
  refused(run(pactFrom(spec), ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2)), ev.fund(c.party, T0 + 3));
});

test('withdraw: refused for an unfunded party, a non-party, and from fundBy on', () => {
  const pact = created();
  refused(pact, ev.withdraw(b.party, T0 + 2), 'withdraw unfunded');
  refused(pact, ev.withdraw(outsider.party, T0 + 2), 'withdraw by an outsider');
  refused(pact, ev.withdraw(a.party, pact.fundBy), 'withdraw at fundBy');
});

test('propose: refused for a non-proposer party, a non-party, and from performBy on', () => {
  const pact = active();
  refused(pact, ev.propose(b.party, T0 + 10, FULL), 'propose by b');
  refused(pact, ev.propose(outsider.party, T0 + 10, FULL), 'propose by an outsider');
  refused(pact, ev.propose(a.party, pact.performBy!, FULL), 'propose at performBy');
});

const badDistributions: [string, Share[]][] = [
  ['summing to 9999', [{ party: a.party, bp: 4000 }, { party: b.party, bp: 5999 }]],
  ['summing to 10001', [{ party: a.party, bp: 4000 }, { party: b.party, bp: 6001 }]],
  ['empty', []],
  ['naming a non-party', [{ party: a.party, bp: 5000 }, { party: outsider.party, bp: 5000 }]],
  ['naming the fee recipient', [{ party: a.party, bp: 5000 }, { party: feeRecipient.party, bp: 5000 }]],
  ['repeating a party', [{ party: a.party, bp: 5000 }, { party: a.party, bp: 5000 }]],
];

test('propose: refused for every distribution that breaks the bp rules', () => {
  const pact = active();
  for (const [why, shares] of badDistributions) refused(pact, ev.propose(a.party, T0 + 10, shares), `proposal ${why}`);
});

test('propose: refused for a distribution naming an optional party dropped at activation', () => {
  const spec = threePartySpec(a, b, c, { minParties: 2 });
  spec.parties[2] = { ...spec.parties[2]!, required: false };
  const pact = run(pactFrom(spec), ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2));
  refused(pact, ev.propose(a.party, T0 + 10, [{ party: b.party, bp: 5000 }, { party: c.party, bp: 5000 }]));
});

test('cosign: refused for the proposer, a non-party, from objectBy on, and a second time', () => {
  const pact = threeProposed();
  refused(pact, ev.cosign(a.party, T0 + 11), 'cosign by the proposer');
  refused(pact, ev.cosign(outsider.party, T0 + 11), 'cosign by an outsider');
  refused(pact, ev.cosign(b.party, pact.objectBy!), 'cosign at objectBy');
  refused(run(pact, ev.cosign(b.party, T0 + 11)), ev.cosign(b.party, T0 + 12), 'duplicate cosign');
});

test('object: refused for the proposer, a non-party, from objectBy on, and after cosigning', () => {
  const pact = threeProposed();
  refused(pact, ev.object(a.party, T0 + 11), 'object by the proposer');
  refused(pact, ev.object(outsider.party, T0 + 11), 'object by an outsider');
  refused(pact, ev.object(b.party, pact.objectBy!), 'object at objectBy');
  refused(run(pact, ev.cosign(b.party, T0 + 11)), ev.object(b.party, T0 + 12), 'object after cosign');
});

test('object: a second objection is refused and the first one stands', () => {
  const pact = run(threeProposed(), ev.object(b.party, T0 + 11, 'first'));
  refused(pact, ev.object(c.party, T0 + 12, 'second'));
  assert.equal(pact.objection, { by: b.party, reason: 'first', at: T0 + 11 });
});

test('verdict: refused when signed by anyone but the pinned evaluator', () => {
  const pact = disputed();
  for (const signer of [a, b, feeRecipient, outsider]) refused(pact, ev.verdict(pact, T0 + 21, FULL, 'objector', signer));
});

test('verdict: refused from verdictBy on', () => {
  const pact = disputed();
  refused(pact, ev.verdict(pact, pact.verdictBy!, FULL, 'objector'));
  assert.ok(evolve(pact, ev.verdict(pact, pact.verdictBy! - 1, FULL, 'objector')));
});

test('verdict: refused for every distribution that breaks the bp rules', () => {
  const pact = disputed();
  for (const [why, shares] of badDistributions) refused(pact, ev.verdict(pact, T0 + 21, shares, 'split'), `verdict ${why}`);
});

test('payoutsRecorded: refused when no named key is a pending payout', () => {
  const pact = byState.SETTLED();
  refused(pact, ev.paid(T0 + 40, []), 'empty record');
  refused(pact, ev.paid(T0 + 40, ['p_test:settle.4:pot:nobody']), 'unknown key');
  refused(created(), ev.paid(T0 + 2, ['anything']), 'record without payouts');
});

test.run();
