// The payouts list: keys `<pactId>:<transition>:<kind>:<party>`, zero lines left out, and `payoutsRecorded`
// marking pending payouts paid (DECISIONS.md "Money, bonds, fees": idempotent per key).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evolve } from '../../machines/pact/evolve.js';
import type { Pact } from '../../machines/pact/types.js';
import {
  ev, feeRecipient, fundAll, pactFrom, partyKey, run, T0, twoPartySpec, usdc,
} from '../support/pacts.js';

const a = partyKey(1);
const b = partyKey(2);
const proposed = (spec = twoPartySpec(a, b)) =>
  run(fundAll(pactFrom(spec)), ev.propose(a.party, T0 + 10, [{ party: a.party, bp: 7000 }, { party: b.party, bp: 3000 }]));
const settled = () => run(proposed(), ev.cosign(b.party, T0 + 20));
const cancelled = () => run(proposed(), ev.cancel(a.party, T0 + 30, [a.party, b.party], T0 + 40));
const keysOf = (pact: Pact) => pact.payouts.map((p) => p.key);

test('settlement payout keys name pact, transition (name.nonce), kind and party', () => {
  assert.equal(keysOf(settled()), [
    `p_test:settle.4:pot:${a.party}`,
    `p_test:settle.4:pot:${b.party}`,
    `p_test:settle.4:bond:${a.party}`,
    `p_test:settle.4:bond:${b.party}`,
  ]);
});

test('verdict payout keys include the fee line to the arbitration fee recipient', () => {
  const pact = run(proposed(), ev.object(b.party, T0 + 20));
  const done = run(pact, ev.verdict(pact, T0 + 21, [{ party: b.party, bp: 10000 }], 'proposer'));
  assert.equal(keysOf(done), [`p_test:verdict.5:pot:${b.party}`, `p_test:verdict.5:bond:${b.party}`, `p_test:verdict.5:fee:${feeRecipient.party}`]);
});

test('refund payouts after a deadline use the refund transition', () => {
  const pact = fundAll(pactFrom(twoPartySpec(a, b)));
  assert.equal(keysOf(run(pact, ev.poke(pact.performBy!))), [
    `p_test:refund.3:deposit:${b.party}`, `p_test:refund.3:bond:${a.party}`, `p_test:refund.3:bond:${b.party}`,
  ]);
});

test('zero amounts get no payout: zero deposit, zero bond, zero share', () => {
  const spec = twoPartySpec(a, b);
  spec.parties = [{ ...spec.parties[0]!, bond: usdc(0) }, spec.parties[1]!];
  const pact = run(proposed(spec), ev.object(b.party, T0 + 20));
  const done = run(pact, ev.verdict(pact, T0 + 21, [{ party: a.party, bp: 0 }, { party: b.party, bp: 10000 }], 'proposer'));
  assert.equal(done.payouts.map((p) => `${p.kind}:${p.amount}`), ['pot:1000', 'bond:100']);
  assert.equal(done.settlement?.bondForfeits, []);
});

test('payoutsRecorded marks the named pending payouts paid with their rail reference', () => {
  const pact = settled();
  const [first, second] = keysOf(pact);
  const next = run(pact, ev.paid(T0 + 50, [first!, second!]));
  assert.is(next.state, 'SETTLED');
  assert.is(next.stateNonce, pact.stateNonce + 1);
  assert.is(next.updatedAt, T0 + 50);
  assert.equal(next.payouts.map((p) => [p.status, p.railRef]), [
    ['paid', `tx:${first}`], ['paid', `tx:${second}`], ['pending', null], ['pending', null],
  ]);
  assert.equal(next.settlement, pact.settlement);
});

test('payoutsRecorded works in CANCELLED and in CREATED after a withdrawal', () => {
  const done = cancelled();
  assert.is(done.state, 'CANCELLED');
  assert.ok(run(done, ev.paid(T0 + 50, keysOf(done))).payouts.every((p) => p.status === 'paid'));
  const withdrawn = run(pactFrom(twoPartySpec(a, b)), ev.fund(b.party, T0 + 1), ev.withdraw(b.party, T0 + 2));
  const recorded = run(withdrawn, ev.paid(T0 + 3, keysOf(withdrawn)));
  assert.is(recorded.state, 'CREATED');
  assert.equal(recorded.payouts.map((p) => p.status), ['paid', 'paid']);
});

test('a second identical payoutsRecorded is refused', () => {
  const pact = settled();
  const record = ev.paid(T0 + 50, keysOf(pact));
  const once = run(pact, record);
  assert.is(evolve(once, { ...record, at: T0 + 51 }), undefined);
});

test('a record mixing a paid and a pending key pays the pending one and keeps the first rail reference', () => {
  const pact = settled();
  const [first, second] = keysOf(pact);
  const once = run(pact, ev.paid(T0 + 50, [first!]));
  const twice = run(once, ev.paid(T0 + 51, [first!, second!], (key) => `retry:${key}`));
  assert.equal(twice.payouts.slice(0, 2).map((p) => p.railRef), [`tx:${first}`, `retry:${second}`]);
});

test('payout keys stay unique over a whole history of withdrawals and a settlement', () => {
  const pact = run(
    pactFrom(twoPartySpec(a, b)),
    ev.fund(b.party, T0 + 1), ev.withdraw(b.party, T0 + 2), ev.fund(b.party, T0 + 3), ev.withdraw(b.party, T0 + 4),
    ev.fund(a.party, T0 + 5), ev.fund(b.party, T0 + 6),
    ev.propose(a.party, T0 + 10, [{ party: b.party, bp: 10000 }]), ev.cosign(b.party, T0 + 11),
  );
  assert.is(pact.payouts.length, 7);
  assert.is(new Set(keysOf(pact)).size, 7);
});

test.run();
