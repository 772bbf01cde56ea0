// Mutual cancel (DECISIONS.md "Lifecycle points": in ACTIVE or PROPOSED only, every party's approval,
// expiresAt in the future and not after the current deadline; CANCELLED with every deposit and bond refunded).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evolve } from '../../machines/pact/evolve.js';
import type { Pact } from '../../machines/pact/types.js';
import type { PartyId } from '../../protocol/party.js';
import {
  ev, fundAll, pactFrom, partyKey, payoutTable, run, T0, threePartySpec, twoPartySpec,
} from '../support/pacts.js';

const a = partyKey(1);
const b = partyKey(2);
const c = partyKey(3);
const outsider = partyKey(9);
const NOW = T0 + 1_000;

const active = () => fundAll(pactFrom(twoPartySpec(a, b)));
const proposed = () => run(active(), ev.propose(a.party, T0 + 500, [{ party: a.party, bp: 10000 }]));
const disputed = () => run(proposed(), ev.object(b.party, T0 + 600));
const everyone = (pact: Pact) => pact.parties.map((p) => p.party);
/** A cancel by `a` at NOW approved by every party, expiring at the current deadline unless told otherwise. */
const cancelOf = (pact: Pact, changes: { approvedBy?: PartyId[]; expiresAt?: number; at?: number; party?: PartyId } = {}) =>
  ev.cancel(
    changes.party ?? a.party,
    changes.at ?? NOW,
    changes.approvedBy ?? everyone(pact),
    changes.expiresAt ?? (pact.state === 'ACTIVE' ? pact.performBy! : pact.objectBy!),
  );

test('mutual cancel in ACTIVE refunds every deposit and bond', () => {
  const pact = run(active(), cancelOf(active()));
  assert.is(pact.state, 'CANCELLED');
  assert.is(pact.stateNonce, 3);
  assert.is(pact.closedAt, NOW);
  assert.is(pact.settlement?.outcome, 'cancelled_mutual');
  assert.equal(payoutTable(pact, 'cancel'), { [`bond:${a.party}`]: '100', [`deposit:${b.party}`]: '1000', [`bond:${b.party}`]: '100' });
  assert.ok(pact.payouts.every((p) => p.key.startsWith('p_test:cancel.3:')));
});

test('mutual cancel in PROPOSED refunds instead of distributing', () => {
  const start = proposed();
  const pact = run(start, cancelOf(start));
  assert.is(pact.state, 'CANCELLED');
  assert.equal(pact.settlement?.pot, []);
  assert.equal(payoutTable(pact), { [`bond:${a.party}`]: '100', [`deposit:${b.party}`]: '1000', [`bond:${b.party}`]: '100' });
});

test('mutual cancel in PROPOSED after a partial cosign', () => {
  const start = run(
    fundAll(pactFrom(threePartySpec(a, b, c))),
    ev.propose(a.party, T0 + 500, [{ party: b.party, bp: 10000 }]),
    ev.cosign(c.party, T0 + 501),
  );
  assert.is(run(start, cancelOf(start)).settlement?.outcome, 'cancelled_mutual');
});

test('any party may submit the cancel, approvals may come in any order', () => {
  const start = active();
  const pact = run(start, cancelOf(start, { party: b.party, approvedBy: [b.party, a.party] }));
  assert.is(pact.state, 'CANCELLED');
});

test('an approval by an optional party dropped at activation is not needed', () => {
  const spec = threePartySpec(a, b, c, { minParties: 2 });
  spec.parties[2] = { ...spec.parties[2]!, required: false };
  const start = run(pactFrom(spec), ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2));
  assert.is(run(start, cancelOf(start, { approvedBy: [a.party, b.party] })).state, 'CANCELLED');
});

test('expiresAt exactly at the current deadline is accepted; one millisecond later is refused', () => {
  const start = active();
  assert.ok(evolve(start, cancelOf(start, { expiresAt: start.performBy! })));
  assert.is(evolve(start, cancelOf(start, { expiresAt: start.performBy! + 1 })), undefined);
});

test('in PROPOSED the bound is objectBy, not performBy', () => {
  const start = proposed();
  assert.ok(start.objectBy! < start.performBy!);
  assert.is(evolve(start, cancelOf(start, { expiresAt: start.objectBy! + 1 })), undefined);
  assert.ok(evolve(start, cancelOf(start, { expiresAt: start.objectBy! })));
});

test('a cancel missing any party approval is refused', () => {
  const start = active();
  assert.is(evolve(start, cancelOf(start, { approvedBy: [a.party] })), undefined);
  assert.is(evolve(start, cancelOf(start, { approvedBy: [a.party, outsider.party] })), undefined);
  assert.is(evolve(start, cancelOf(start, { approvedBy: [] })), undefined);
});

test('a cancel whose approvals expire now or earlier is refused', () => {
  const start = active();
  assert.is(evolve(start, cancelOf(start, { expiresAt: NOW })), undefined);
  assert.is(evolve(start, cancelOf(start, { expiresAt: NOW - 1 })), undefined);
  assert.ok(evolve(start, cancelOf(start, { expiresAt: NOW + 1 })));
});

test('a cancel at or after the current deadline is refused', () => {
  const start = active();
  const at = start.performBy!;
  assert.is(evolve(start, cancelOf(start, { at, expiresAt: at + 1 })), undefined);
  assert.is(evolve(start, cancelOf(start, { at, expiresAt: at })), undefined);
});

test('a cancel submitted by a non-party is refused even with every approval', () => {
  const start = active();
  assert.is(evolve(start, cancelOf(start, { party: outsider.party })), undefined);
});

test('cancel is refused in CREATED, DISPUTED, SETTLED and CANCELLED', () => {
  const created = run(pactFrom(twoPartySpec(a, b)), ev.fund(a.party, T0 + 1));
  const settled = run(proposed(), ev.cosign(b.party, T0 + 700));
  const cancelled = run(active(), cancelOf(active()));
  for (const pact of [created, disputed(), settled, cancelled]) {
    const event = ev.cancel(a.party, NOW, [a.party, b.party], NOW + 1);
    assert.is(evolve(pact, event), undefined, `cancel accepted in ${pact.state}`);
  }
});

test.run();
