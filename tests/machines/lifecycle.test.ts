// ACTIVE → PROPOSED → SETTLED / DISPUTED → SETTLED, and the perform / object / verdict deadlines
// (escrow-service.md "States and transitions", "Bond rules"; DECISIONS.md "Lifecycle points", "Money, bonds, fees").
import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact, Share } from '../../machines/pact/types.js';
import type { KeyPair } from '../../protocol/sign.js';
import {
  ev, feeRecipient, fundAll, HOUR_MS, pactFrom, partyKey, payoutTable, policy, run, sumAmounts, T0,
  threePartySpec, twoPartySpec, usdc,
} from '../support/pacts.js';

const a = partyKey(1); // proposer
const b = partyKey(2);
const c = partyKey(3);
const OBJECT = 72 * HOUR_MS;
const PROPOSED_AT = T0 + 100;
const OBJECT_BY = PROPOSED_AT + OBJECT;
const OBJECTED_AT = PROPOSED_AT + 10;
const VERDICT_BY = OBJECTED_AT + policy.evaluator.timeoutMs;

const split = (...shares: [KeyPair, number][]): Share[] => shares.map(([k, bp]) => ({ party: k.party, bp }));
const active = (pact = pactFrom(twoPartySpec(a, b))) => fundAll(pact);
const proposed = (pact = active(), shares = split([a, 9000], [b, 1000])) => run(pact, ev.propose(a.party, PROPOSED_AT, shares));
const disputed = (pact = proposed()) => run(pact, ev.object(b.party, OBJECTED_AT, 'missing section'));
const threeActive = () => active(pactFrom(threePartySpec(a, b, c)));
/** Two parties whose bonds are odd, for the split fee. */
const oddBonds = () => {
  const spec = twoPartySpec(a, b);
  spec.parties = [{ ...spec.parties[0]!, bond: usdc(101) }, { ...spec.parties[1]!, bond: usdc(75) }];
  return disputed(proposed(active(pactFrom(spec))));
};

test('propose by the proposer freezes the proposal and opens the object window', () => {
  const shares = split([a, 9000], [b, 1000]);
  const pact = proposed(active(), shares);
  assert.is(pact.state, 'PROPOSED');
  assert.is(pact.stateNonce, 3);
  assert.equal(pact.proposal, { evidence: [{ note: 'done' }], distribution: shares });
  assert.is(pact.proposedAt, PROPOSED_AT);
  assert.is(pact.objectBy, OBJECT_BY);
  assert.equal(pact.payouts, []);
});

test('inputHash is lowercase hex SHA-256 of JCS of { terms, proposer, evidence, distribution }', () => {
  const pact = proposed();
  const frozen = { terms: pact.terms, proposer: a.party, evidence: pact.proposal!.evidence, distribution: pact.proposal!.distribution };
  const expected = createHash('sha256').update(canonicalize(frozen)!).digest('hex');
  assert.is(pact.inputHash, expected);
  assert.match(pact.inputHash!, /^[0-9a-f]{64}$/);
});

test('inputHash changes when the distribution changes', () => {
  assert.is.not(proposed(active(), split([a, 5000], [b, 5000])).inputHash, proposed().inputHash);
});

test('propose one millisecond before performBy is accepted', () => {
  const pact = active();
  assert.is(run(pact, ev.propose(a.party, pact.performBy! - 1, split([a, 10000]))).state, 'PROPOSED');
});

test('poke at performBy cancels with a full refund of every deposit and bond', () => {
  const pact = active();
  const done = run(pact, ev.poke(pact.performBy!));
  assert.is(done.state, 'CANCELLED');
  assert.is(done.closedAt, pact.performBy);
  assert.equal(done.settlement, {
    outcome: 'cancelled_perform_deadline',
    pot: [],
    depositRefunds: [{ party: a.party, amount: '0' }, { party: b.party, amount: '1000' }],
    bondReturns: [{ party: a.party, amount: '100' }, { party: b.party, amount: '100' }],
    bondForfeits: [],
  });
  assert.equal(payoutTable(done), { [`bond:${a.party}`]: '100', [`deposit:${b.party}`]: '1000', [`bond:${b.party}`]: '100' });
});

test('cosign by the only non-proposer settles as proposed and returns every bond', () => {
  const pact = run(proposed(), ev.cosign(b.party, PROPOSED_AT + 5));
  assert.is(pact.state, 'SETTLED');
  assert.is(pact.closedAt, PROPOSED_AT + 5);
  assert.equal(pact.cosigns, [{ party: b.party, at: PROPOSED_AT + 5 }]);
  assert.equal(pact.settlement, {
    outcome: 'settled_by_cosign',
    pot: [{ party: a.party, amount: '900' }, { party: b.party, amount: '100' }],
    depositRefunds: [],
    bondReturns: [{ party: a.party, amount: '100' }, { party: b.party, amount: '100' }],
    bondForfeits: [],
  });
  assert.is(sumAmounts(pact.payouts), 1200n);
});

test('a partial cosign keeps the pact PROPOSED; the last funded non-proposer settles it', () => {
  const first = run(proposed(threeActive(), split([a, 10000])), ev.cosign(c.party, PROPOSED_AT + 1));
  assert.is(first.state, 'PROPOSED');
  assert.is(first.stateNonce, 5);
  assert.is(first.settlement, null);
  assert.equal(first.payouts, []);
  const last = run(first, ev.cosign(b.party, PROPOSED_AT + 2));
  assert.is(last.state, 'SETTLED');
  assert.equal(last.cosigns.map((x) => x.party), [c.party, b.party]);
  assert.is(payoutTable(last)[`pot:${a.party}`], '1000');
});

test('an optional party dropped at activation is not needed to cosign', () => {
  const spec = threePartySpec(a, b, c, { minParties: 2 });
  spec.parties[2] = { ...spec.parties[2]!, required: false };
  const pact = run(pactFrom(spec), ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2));
  const settled = run(proposed(pact, split([a, 10000])), ev.cosign(b.party, PROPOSED_AT + 1));
  assert.is(settled.state, 'SETTLED');
});

test('poke at objectBy settles by silence as proposed', () => {
  const pact = run(proposed(), ev.poke(OBJECT_BY));
  assert.is(pact.state, 'SETTLED');
  assert.is(pact.closedAt, OBJECT_BY);
  assert.is(pact.settlement?.outcome, 'settled_by_silence');
  assert.equal(payoutTable(pact, 'settle'), {
    [`pot:${a.party}`]: '900', [`pot:${b.party}`]: '100', [`bond:${a.party}`]: '100', [`bond:${b.party}`]: '100',
  });
});

test('silence settles a partially cosigned pact too', () => {
  const pact = run(proposed(threeActive(), split([b, 5000], [c, 5000])), ev.cosign(b.party, PROPOSED_AT + 1), ev.poke(OBJECT_BY + 9));
  assert.is(pact.state, 'SETTLED');
  assert.is(pact.settlement?.outcome, 'settled_by_silence');
  assert.equal(pact.settlement?.pot, [{ party: b.party, amount: '500' }, { party: c.party, amount: '500' }]);
});

test('the first objection disputes the pact and starts the evaluator clock', () => {
  const pact = disputed();
  assert.is(pact.state, 'DISPUTED');
  assert.is(pact.stateNonce, 4);
  assert.equal(pact.objection, { by: b.party, reason: 'missing section', at: OBJECTED_AT });
  assert.is(pact.disputedAt, OBJECTED_AT);
  assert.is(pact.verdictBy, VERDICT_BY);
  assert.equal(pact.payouts, []);
});

test('an objection by one party after another cosigned still disputes', () => {
  const pact = run(proposed(threeActive(), split([a, 10000])), ev.cosign(b.party, PROPOSED_AT + 1), ev.object(c.party, PROPOSED_AT + 2));
  assert.is(pact.state, 'DISPUTED');
  assert.is(pact.objection?.by, c.party);
});

test('verdict feeFrom objector: pot as the verdict says, the objector forfeits its whole bond as one fee', () => {
  const pact = disputed();
  const done = run(pact, ev.verdict(pact, VERDICT_BY - 1, split([a, 9000], [b, 1000]), 'objector'));
  assert.is(done.state, 'SETTLED');
  assert.is(done.settlement?.outcome, 'settled_by_verdict');
  assert.equal(done.settlement?.bondForfeits, [{ party: b.party, amount: '100' }]);
  assert.equal(payoutTable(done, 'verdict'), {
    [`pot:${a.party}`]: '900', [`pot:${b.party}`]: '100', [`bond:${a.party}`]: '100', [`fee:${feeRecipient.party}`]: '100',
  });
  assert.is(done.verdict?.feeFrom, 'objector');
  assert.is(done.closedAt, VERDICT_BY - 1);
});

test('verdict feeFrom proposer: the distribution changes and the proposer forfeits its bond', () => {
  const pact = disputed();
  const done = run(pact, ev.verdict(pact, OBJECTED_AT + 1, split([b, 10000]), 'proposer'));
  assert.equal(done.settlement?.pot, [{ party: b.party, amount: '1000' }]);
  assert.equal(done.settlement?.bondReturns, [{ party: a.party, amount: '0' }, { party: b.party, amount: '100' }]);
  assert.equal(payoutTable(done, 'verdict'), {
    [`pot:${b.party}`]: '1000', [`bond:${b.party}`]: '100', [`fee:${feeRecipient.party}`]: '100',
  });
});

test('verdict split with odd bonds: each forfeits floor(half) into one fee payout, the odd units return', () => {
  const pact = oddBonds();
  const done = run(pact, ev.verdict(pact, OBJECTED_AT + 1, split([a, 5000], [b, 5000]), 'split'));
  assert.equal(done.settlement?.bondForfeits, [{ party: a.party, amount: '50' }, { party: b.party, amount: '37' }]);
  assert.equal(done.settlement?.bondReturns, [{ party: a.party, amount: '51' }, { party: b.party, amount: '38' }]);
  const fees = done.payouts.filter((p) => p.kind === 'fee');
  assert.equal(fees.map((p) => [p.party, p.amount]), [[feeRecipient.party, '87']]);
  assert.is(sumAmounts(done.payouts), 1000n + 101n + 75n);
});

test('verdict in a three-party pact: a bystander keeps its whole bond', () => {
  const pact = run(proposed(threeActive(), split([a, 10000])), ev.object(c.party, PROPOSED_AT + 1));
  const done = run(pact, ev.verdict(pact, PROPOSED_AT + 2, split([a, 10000]), 'objector'));
  assert.equal(done.settlement?.bondForfeits, [{ party: c.party, amount: '30' }]);
  assert.equal(done.settlement?.bondReturns.map((r) => r.amount), ['50', '70', '0']);
  assert.equal(done.settlement?.pot.map((r) => r.amount), ['1000']);
});

test('poke at verdictBy cancels and refunds everyone in full', () => {
  const done = run(disputed(), ev.poke(VERDICT_BY));
  assert.is(done.state, 'CANCELLED');
  assert.is(done.closedAt, VERDICT_BY);
  assert.is(done.settlement?.outcome, 'cancelled_verdict_deadline');
  assert.equal(done.settlement?.bondForfeits, []);
  assert.equal(payoutTable(done, 'refund'), { [`bond:${a.party}`]: '100', [`deposit:${b.party}`]: '1000', [`bond:${b.party}`]: '100' });
});

test('every accepted step of a full dispute advances stateNonce by exactly one', () => {
  const steps: ((p: Pact) => Pact)[] = [
    (p) => run(p, ev.fund(a.party, T0 + 1)),
    (p) => run(p, ev.fund(b.party, T0 + 2)),
    (p) => proposed(p),
    (p) => disputed(p),
    (p) => run(p, ev.verdict(p, OBJECTED_AT + 1, p.proposal!.distribution, 'objector')),
    (p) => run(p, ev.paid(OBJECTED_AT + 2, p.payouts.map((x) => x.key))),
  ];
  let pact = pactFrom(twoPartySpec(a, b));
  steps.forEach((step, i) => {
    pact = step(pact);
    assert.is(pact.stateNonce, i + 1);
  });
});

test.run();
