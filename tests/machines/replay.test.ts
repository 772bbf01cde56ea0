// Replay: the machine is a pure function of (pact, event), so the journal rebuilds the pact exactly,
// and a stored pact (JSON) resumes where it left off.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createActor } from 'xstate';
import type { PactEvent } from '../../machines/pact/events.js';
import { evolve, snapshotOf } from '../../machines/pact/evolve.js';
import { pactMachine } from '../../machines/pact/machine.js';
import { newPact } from '../../machines/pact/spec.js';
import { ev, pactFrom, partyKey, policy, run, T0, threePartySpec, twoPartySpec } from '../support/pacts.js';

const a = partyKey(1);
const b = partyKey(2);
const c = partyKey(3);
const genesis = () => newPact({ id: 'p_replay', spec: twoPartySpec(a, b), createdBy: a.party, at: T0, policy, escrowAccount: 'mock:escrow' });

/** The journal of a disputed pact settled by verdict, payouts recorded, with a withdrawal round first. */
function disputeJournal(): PactEvent[] {
  const head: PactEvent[] = [
    ev.fund(b.party, T0 + 1), ev.withdraw(b.party, T0 + 2), ev.fund(b.party, T0 + 3), ev.fund(a.party, T0 + 4),
    ev.propose(a.party, T0 + 5, [{ party: a.party, bp: 6667 }, { party: b.party, bp: 3333 }], [{ url: 'https://x.test/r' }]),
    ev.object(b.party, T0 + 6, 'late'),
  ];
  const disputed = run(genesis(), ...head);
  const verdict = ev.verdict(disputed, T0 + 7, [{ party: a.party, bp: 5000 }, { party: b.party, bp: 5000 }], 'split');
  const settled = run(disputed, verdict);
  return [...head, verdict, ev.paid(T0 + 8, settled.payouts.map((p) => p.key))];
}
const cosignJournal = (): PactEvent[] => [
  ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2),
  ev.propose(a.party, T0 + 3, [{ party: b.party, bp: 10000 }]), ev.cosign(b.party, T0 + 4),
];
const viaJson = <T>(value: T): T => JSON.parse(JSON.stringify(value)) as T;

test('replaying the same journal twice from newPact gives deep-equal pacts', () => {
  for (const journal of [disputeJournal(), cosignJournal()]) {
    const first = run(genesis(), ...journal);
    const second = run(genesis(), ...journal);
    assert.equal(first, second);
    assert.is(first.stateNonce, journal.length);
  }
  assert.is(run(genesis(), ...disputeJournal()).state, 'SETTLED');
});

test('evolve leaves its input untouched', () => {
  const pact = run(genesis(), ...cosignJournal().slice(0, 3));
  const before = structuredClone(pact);
  evolve(pact, ev.cosign(b.party, T0 + 4));
  evolve(pact, ev.cosign(a.party, T0 + 4));
  assert.equal(pact, before);
});

test('a pact stored as JSON at every step continues exactly like the one kept in memory', () => {
  const journal = disputeJournal();
  let memory = genesis();
  let stored = viaJson(genesis());
  for (const event of journal) {
    memory = run(memory, event);
    stored = viaJson(run(stored, viaJson(event)));
    assert.equal(stored, memory);
  }
});

test('snapshotOf: the state value is the pact state and the context is the pact, in every state', () => {
  const journal = disputeJournal();
  let pact = genesis();
  const seen = new Set<string>();
  for (const event of journal) {
    pact = run(pact, event);
    const snapshot = snapshotOf(viaJson(pact));
    assert.is(snapshot.value, pact.state);
    assert.equal(snapshot.context, pact);
    seen.add(pact.state);
  }
  assert.equal([...seen].sort(), ['ACTIVE', 'CREATED', 'DISPUTED', 'PROPOSED', 'SETTLED']);
});

test('a persisted snapshot survives JSON and an actor restored from it continues correctly', () => {
  const journal = cosignJournal();
  const proposed = run(genesis(), ...journal.slice(0, 3));
  const persisted = viaJson(pactMachine.getPersistedSnapshot(snapshotOf(proposed)));
  const actor = createActor(pactMachine, { snapshot: persisted as never, input: genesis() }).start();
  assert.is(actor.getSnapshot().value, 'PROPOSED');
  actor.send(journal[3]!);
  assert.is(actor.getSnapshot().value, 'SETTLED');
  assert.equal(actor.getSnapshot().context, run(proposed, journal[3]!));
  actor.stop();
});

test('a three-party journal with a partial cosign and silence replays from JSON to the same settlement', () => {
  const spec = threePartySpec(a, b, c);
  const start = pactFrom(spec);
  const partial = run(start, ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2), ev.fund(c.party, T0 + 3),
    ev.propose(a.party, T0 + 4, [{ party: b.party, bp: 3333 }, { party: c.party, bp: 6667 }]), ev.cosign(b.party, T0 + 5));
  const poke = ev.poke(partial.objectBy!);
  const fromMemory = run(partial, poke);
  const fromJson = run(snapshotOf(viaJson(partial)).context, poke);
  assert.equal(fromJson, fromMemory);
  assert.equal(fromMemory.settlement?.pot, [{ party: b.party, amount: '333' }, { party: c.party, amount: '667' }]);
});

test.run();
