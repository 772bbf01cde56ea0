// `refusal(pact, command, now)`: error codes, their HTTP statuses and the order of the checks
// (403 → 409 stateNonce → 409 state / already_* → 422 time → 400 content; DECISIONS.md "Errors", "Verdict").
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PactCommand } from '../../machines/pact/commands.js';
import { eventOf, refusal } from '../../machines/pact/decide.js';
import { evolve } from '../../machines/pact/evolve.js';
import type { PactEvent } from '../../machines/pact/events.js';
import type { Pact, Share } from '../../machines/pact/types.js';
import { ERROR_STATUS, statusOf, type PactError } from '../../protocol/errors.js';
import {
  cmd, ev, fundAll, pactFrom, partyKey, run, T0, threePartySpec, twoPartySpec, verdictBody,
} from '../support/pacts.js';

const a = partyKey(1); // proposer
const b = partyKey(2);
const c = partyKey(3);
const outsider = partyKey(9);
const FULL: Share[] = [{ party: a.party, bp: 5000 }, { party: b.party, bp: 5000 }];
const BAD: Share[] = [{ party: a.party, bp: 5000 }, { party: b.party, bp: 4000 }];

const created = () => run(pactFrom(twoPartySpec(a, b)), ev.fund(a.party, T0 + 1));
const active = () => fundAll(pactFrom(twoPartySpec(a, b)));
const proposed = () => run(active(), ev.propose(a.party, T0 + 10, FULL));
const disputed = () => run(proposed(), ev.object(b.party, T0 + 20));
const settled = () => run(proposed(), ev.cosign(b.party, T0 + 20));
const threeProposed = () => run(fundAll(pactFrom(threePartySpec(a, b, c))), ev.propose(a.party, T0 + 10, [{ party: a.party, bp: 10000 }]));
/** A moment inside the current state's window. */
const nowIn = (pact: Pact) => pact.updatedAt + 1;
const verdictOn = (pact: Pact, changes: { signer?: typeof a; inputHash?: string; shares?: Share[] } = {}) =>
  cmd.verdict(verdictBody(pact, nowIn(pact), changes.shares ?? FULL, 'objector', changes.signer, changes.inputHash));

/** Asserts the refusal's code, its status and the details it carries. */
function refusedWith(error: PactError | undefined, code: PactError['error'], status: number, details: Record<string, unknown> = {}) {
  assert.ok(error, `expected ${code}, got no refusal`);
  assert.is(error.error, code);
  assert.is(ERROR_STATUS[error.error], status);
  assert.is(statusOf(error), status);
  assert.type(error.message, 'string');
  for (const [key, value] of Object.entries(details)) assert.equal(error[key], value, `detail ${key}`);
}

// ---- order of the checks ----

test('a non-party with a stale nonce in the wrong state is forbidden (403 first)', () => {
  const pact = proposed();
  refusedWith(refusal(pact, cmd.fund(outsider.party, 0), nowIn(pact)), 'forbidden', 403);
  refusedWith(refusal(pact, cmd.cosign(outsider.party, 0), pact.objectBy! + 1), 'forbidden', 403);
  refusedWith(refusal(active(), cmd.propose(b.party, 0, BAD), T0 + 10 ** 12), 'forbidden', 403);
});

test('a party with a stale nonce in the wrong state gets stateNonce_mismatch with currentNonce', () => {
  const pact = active();
  refusedWith(refusal(pact, cmd.cosign(b.party, 0), nowIn(pact)), 'stateNonce_mismatch', 409, { currentNonce: 2 });
  refusedWith(refusal(pact, cmd.propose(a.party, 3, FULL), nowIn(pact)), 'stateNonce_mismatch', 409, { currentNonce: 2 });
});

test('the right nonce in the wrong state gets invalid_state naming the state', () => {
  const pact = active();
  refusedWith(refusal(pact, cmd.cosign(b.party, 2), nowIn(pact)), 'invalid_state', 409, { state: 'ACTIVE' });
  refusedWith(refusal(pact, cmd.withdraw(a.party, 2), nowIn(pact)), 'invalid_state', 409, { state: 'ACTIVE' });
});

test('the state is checked before the time', () => {
  const pact = proposed();
  refusedWith(refusal(pact, cmd.propose(a.party, 3, FULL), pact.performBy! + 1), 'invalid_state', 409);
});

test('the time is checked before the content', () => {
  const pact = active();
  refusedWith(refusal(pact, cmd.propose(a.party, 2, BAD), pact.performBy!), 'deadline_passed', 422, { performBy: pact.performBy });
});

test('stateNonce comes before already_funded, and already_funded before the deadline', () => {
  const pact = created();
  refusedWith(refusal(pact, cmd.fund(a.party, 0), nowIn(pact)), 'stateNonce_mismatch', 409, { currentNonce: 1 });
  refusedWith(refusal(pact, cmd.fund(a.party, 1), pact.fundBy + 1), 'already_funded', 409);
});

// ---- per command ----

test('fund: accepted for an unfunded party in time; late is deadline_passed with fundBy', () => {
  const pact = created();
  assert.is(refusal(pact, cmd.fund(b.party, 1), pact.fundBy - 1), undefined);
  refusedWith(refusal(pact, cmd.fund(b.party, 1), pact.fundBy), 'deadline_passed', 422, { fundBy: pact.fundBy });
});

test('withdraw: forbidden unless funded; deadline_passed from fundBy on', () => {
  const pact = created();
  assert.is(refusal(pact, cmd.withdraw(a.party, 1), nowIn(pact)), undefined);
  refusedWith(refusal(pact, cmd.withdraw(b.party, 1), nowIn(pact)), 'forbidden', 403);
  refusedWith(refusal(pact, cmd.withdraw(a.party, 1), pact.fundBy), 'deadline_passed', 422);
});

test('propose: invalid distribution is invalid_request naming call.distribution', () => {
  const pact = active();
  assert.is(refusal(pact, cmd.propose(a.party, 2, FULL), nowIn(pact)), undefined);
  refusedWith(refusal(pact, cmd.propose(a.party, 2, BAD), nowIn(pact)), 'invalid_request', 400, { field: 'call.distribution' });
});

test('cosign: the proposer is forbidden; a second cosign is already_cosigned', () => {
  const pact = threeProposed();
  assert.is(refusal(pact, cmd.cosign(b.party, 4), nowIn(pact)), undefined);
  refusedWith(refusal(pact, cmd.cosign(a.party, 4), nowIn(pact)), 'forbidden', 403);
  const once = run(pact, ev.cosign(b.party, nowIn(pact)));
  refusedWith(refusal(once, cmd.cosign(b.party, 5), nowIn(once)), 'already_cosigned', 409);
});

test('object: after one’s own cosign is already_cosigned; a second objection is invalid_state', () => {
  const once = run(threeProposed(), ev.cosign(b.party, T0 + 11));
  refusedWith(refusal(once, cmd.object(b.party, 5), nowIn(once)), 'already_cosigned', 409);
  const objected = run(threeProposed(), ev.object(b.party, T0 + 11));
  refusedWith(refusal(objected, cmd.object(c.party, 5), nowIn(objected)), 'invalid_state', 409, { state: 'DISPUTED' });
});

test('cosign and object: deadline_passed with objectBy from objectBy on', () => {
  const pact = proposed();
  for (const command of [cmd.cosign(b.party, 3), cmd.object(b.party, 3)]) {
    assert.is(refusal(pact, command, pact.objectBy! - 1), undefined);
    refusedWith(refusal(pact, command, pact.objectBy!), 'deadline_passed', 422, { objectBy: pact.objectBy });
  }
});

test('verdict: a wrong signer is invalid_signature (401), before the state check', () => {
  refusedWith(refusal(disputed(), verdictOn(disputed(), { signer: b }), nowIn(disputed())), 'invalid_signature', 401);
  refusedWith(refusal(active(), verdictOn(active(), { signer: outsider }), nowIn(active())), 'invalid_signature', 401);
});

test('verdict: feeFrom must agree with the distribution (bond table): objector pays as proposed, proposer changes it', () => {
  const pact = disputed();
  const changed: Share[] = [{ party: a.party, bp: 2000 }, { party: b.party, bp: 8000 }];
  const withFee = (shares: Share[], feeFrom: 'objector' | 'proposer' | 'split') => cmd.verdict(verdictBody(pact, nowIn(pact), shares, feeFrom));
  refusedWith(refusal(pact, withFee(changed, 'objector'), nowIn(pact)), 'invalid_request', 400, { field: 'feeFrom' });
  refusedWith(refusal(pact, withFee([...FULL].reverse(), 'proposer'), nowIn(pact)), 'invalid_request', 400, { field: 'feeFrom' });
  for (const [shares, feeFrom] of [[FULL, 'objector'], [changed, 'proposer'], [FULL, 'split'], [changed, 'split']] as const) {
    assert.is(refusal(pact, withFee([...shares], feeFrom), nowIn(pact)), undefined, `${feeFrom} ${JSON.stringify(shares)}`);
  }
});

test('verdict: not DISPUTED is invalid_state; another inputHash is inputHash_mismatch carrying the pact’s hash', () => {
  const pact = disputed();
  assert.is(refusal(pact, verdictOn(pact), nowIn(pact)), undefined);
  refusedWith(refusal(settled(), verdictOn(settled()), nowIn(settled())), 'invalid_state', 409, { state: 'SETTLED' });
  refusedWith(refusal(pact, verdictOn(pact, { inputHash: '0'.repeat(64) }), pact.verdictBy! + 1), 'inputHash_mismatch', 409, {
    inputHash: pact.inputHash,
  });
});

test('verdict: late is deadline_passed with verdictBy; a bad distribution is invalid_request naming distribution', () => {
  const pact = disputed();
  refusedWith(refusal(pact, verdictOn(pact, { shares: BAD }), pact.verdictBy!), 'deadline_passed', 422, { verdictBy: pact.verdictBy });
  refusedWith(refusal(pact, verdictOn(pact, { shares: BAD }), nowIn(pact)), 'invalid_request', 400, { field: 'distribution' });
});

test('cancel: missing approvals are forbidden listing who is missing, before the nonce check', () => {
  const pact = active();
  refusedWith(refusal(pact, cmd.cancel(a.party, 0, [a.party], pact.performBy!), nowIn(pact)), 'forbidden', 403, { missing: [b.party] });
  refusedWith(refusal(pact, cmd.cancel(a.party, 2, [], pact.performBy!), nowIn(pact)), 'forbidden', 403, { missing: [a.party, b.party] });
  refusedWith(refusal(pact, cmd.cancel(outsider.party, 2, [a.party, b.party], pact.performBy!), nowIn(pact)), 'forbidden', 403);
});

test('cancel: expiresAt after the current deadline is expiresAt_after_deadline with the deadline', () => {
  for (const pact of [active(), proposed()]) {
    const deadline = pact.state === 'ACTIVE' ? pact.performBy! : pact.objectBy!;
    const all = [a.party, b.party];
    assert.is(refusal(pact, cmd.cancel(a.party, pact.stateNonce, all, deadline), nowIn(pact)), undefined);
    refusedWith(refusal(pact, cmd.cancel(a.party, pact.stateNonce, all, deadline + 1), nowIn(pact)), 'expiresAt_after_deadline', 422, { deadline });
  }
});

test('cancel: expired approvals and a passed deadline are deadline_passed', () => {
  const pact = active();
  const all = [a.party, b.party];
  refusedWith(refusal(pact, cmd.cancel(a.party, 2, all, nowIn(pact)), nowIn(pact)), 'deadline_passed', 422);
  refusedWith(refusal(pact, cmd.cancel(a.party, 2, all, pact.performBy!), pact.performBy!), 'deadline_passed', 422, { performBy: pact.performBy });
});

test('cancel: CREATED and DISPUTED are invalid_state', () => {
  for (const pact of [created(), disputed()]) {
    refusedWith(refusal(pact, cmd.cancel(a.party, pact.stateNonce, [a.party, b.party], nowIn(pact) + 1), nowIn(pact)), 'invalid_state', 409);
  }
});

test('poke and recordPayouts are never refused, in any state, at any time', () => {
  for (const pact of [pactFrom(twoPartySpec(a, b)), created(), active(), proposed(), disputed(), settled()]) {
    for (const now of [0, nowIn(pact), T0 + 10 ** 12]) {
      assert.is(refusal(pact, cmd.poke(), now), undefined);
      assert.is(refusal(pact, cmd.recordPayouts([{ key: 'nope', railRef: 'x' }]), now), undefined);
    }
  }
});

// ---- agreement with the machine ----

const eventFor = (command: PactCommand, at: number): PactEvent =>
  command.type === 'fund' ? ev.fund(command.signer, at) : eventOf(command, at);

test('with the right nonce, refusal() and the machine agree on every signed command in every state', () => {
  const pacts = [created(), active(), proposed(), disputed(), settled(), threeProposed()];
  for (const pact of pacts) {
    const n = pact.stateNonce;
    for (const now of [nowIn(pact), pact.fundBy, (pact.performBy ?? 0) + 1, (pact.objectBy ?? 0), (pact.verdictBy ?? 0) - 1]) {
      for (const who of [a, b, c, outsider]) {
        const commands: PactCommand[] = [
          cmd.fund(who.party, n), cmd.withdraw(who.party, n), cmd.propose(who.party, n, FULL), cmd.cosign(who.party, n),
          cmd.object(who.party, n), cmd.cancel(who.party, n, pact.parties.map((p) => p.party), now + 1), verdictOn(pact, { signer: who }),
        ];
        for (const command of [...commands, verdictOn(pact)]) {
          const refused = refusal(pact, command, now) !== undefined;
          const accepted = evolve(pact, eventFor(command, now)) !== undefined;
          assert.is(accepted, !refused, `${command.type} in ${pact.state} at +${now - pact.updatedAt}: refused=${refused}`);
        }
      }
    }
  }
});

// ---- eventOf ----

test('eventOf turns each command into the machine event at `at`', () => {
  const pact = disputed();
  const body = verdictBody(pact, 5, FULL, 'split');
  assert.equal(eventOf(cmd.withdraw(a.party, 1), 7), { type: 'withdraw', at: 7, party: a.party });
  assert.equal(eventOf(cmd.cosign(b.party, 1), 7), { type: 'cosign', at: 7, party: b.party });
  assert.equal(eventOf(cmd.propose(a.party, 1, FULL), 7), { type: 'propose', at: 7, party: a.party, proposal: { evidence: [{ note: 'done' }], distribution: FULL } });
  assert.equal(eventOf(cmd.object(b.party, 1, 'why'), 7), { type: 'object', at: 7, party: b.party, reason: 'why' });
  assert.equal(eventOf(cmd.cancel(a.party, 1, [a.party], 9), 7), { type: 'cancel', at: 7, party: a.party, approvedBy: [a.party], expiresAt: 9 });
  assert.equal(eventOf(cmd.verdict(body), 7), { type: 'verdict', at: 7, verdict: { ...body, at: 7 } });
  assert.equal(eventOf(cmd.poke(), 7), { type: 'poke', at: 7 });
  assert.equal(eventOf(cmd.recordPayouts([{ key: 'k', railRef: 'r' }]), 7), { type: 'payoutsRecorded', at: 7, paid: [{ key: 'k', railRef: 'r' }] });
});

test.run();
