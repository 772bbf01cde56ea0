// CREATED: fund, withdraw and the fund deadline (escrow-service.md "States and transitions",
// DECISIONS.md "Lifecycle points": Activation, Withdraw).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { refusal } from '../../machines/pact/decide.js';
import { evolve } from '../../machines/pact/evolve.js';
import { MAX_FUNDING_ROUNDS } from '../../machines/pact/limits.js';
import type { Pact } from '../../machines/pact/types.js';
import {
  cmd, ev, HOUR_MS, pactFrom, partyKey, payoutTable, run, T0, threePartySpec, twoPartySpec, usdc,
} from '../support/pacts.js';

const a = partyKey(1);
const b = partyKey(2);
const c = partyKey(3);
const FUND_BY = T0 + 24 * HOUR_MS;
const PERFORM = 168 * HOUR_MS;

const two = () => pactFrom(twoPartySpec(a, b));
/** a and b required, c optional; `minParties` as given. */
const withOptionalC = (minParties: number) => {
  const spec = threePartySpec(a, b, c, { minParties });
  spec.parties[2] = { ...spec.parties[2]!, required: false };
  return pactFrom(spec);
};
const partyIds = (pact: Pact) => pact.parties.map((p) => p.party);
const entry = (pact: Pact, key: { party: string }) => pact.parties.find((p) => p.party === key.party)!;

test('a first fund records the deposit and bond and keeps the pact CREATED', () => {
  const pact = run(two(), ev.fund(b.party, T0 + 5, 'rcpt-b'));
  assert.is(pact.state, 'CREATED');
  assert.is(pact.stateNonce, 1);
  assert.is(pact.updatedAt, T0 + 5);
  assert.equal(entry(pact, b), {
    party: b.party, deposit: usdc(1000), bond: usdc(100), required: true,
    confirmed: true, paidPot: '1000', paidBond: '100', fundedAt: T0 + 5, receipt: 'rcpt-b', withdrawals: 0,
  });
  assert.is(entry(pact, a).confirmed, false);
  assert.is(pact.activeAt, null);
  assert.is(pact.performBy, null);
  assert.equal(pact.payouts, []);
});

test('the last required fund activates in the same event and starts the perform window', () => {
  const pact = run(two(), ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 7));
  assert.is(pact.state, 'ACTIVE');
  assert.is(pact.stateNonce, 2);
  assert.is(pact.activeAt, T0 + 7);
  assert.is(pact.performBy, T0 + 7 + PERFORM);
  assert.is(entry(pact, b).paidPot, '1000');
});

test('funding order does not matter for activation', () => {
  const pact = run(two(), ev.fund(b.party, T0 + 1), ev.fund(a.party, T0 + 2));
  assert.is(pact.state, 'ACTIVE');
  assert.is(pact.activeAt, T0 + 2);
});

test('activation waits for minParties even when every required party has funded', () => {
  const both = run(withOptionalC(3), ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2));
  assert.is(both.state, 'CREATED');
  const all = run(both, ev.fund(c.party, T0 + 3));
  assert.is(all.state, 'ACTIVE');
  assert.equal(partyIds(all), [a.party, b.party, c.party]);
});

test('an optional party funding does not activate while a required party is unfunded', () => {
  const pact = run(withOptionalC(2), ev.fund(c.party, T0 + 1), ev.fund(a.party, T0 + 2));
  assert.is(pact.state, 'CREATED');
  assert.is(run(pact, ev.fund(b.party, T0 + 3)).state, 'ACTIVE');
});

test('unfunded optional parties are dropped at activation', () => {
  const pact = run(withOptionalC(2), ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2));
  assert.is(pact.state, 'ACTIVE');
  assert.equal(partyIds(pact), [a.party, b.party]);
});

test('a funded optional party is kept at activation', () => {
  const pact = run(withOptionalC(2), ev.fund(c.party, T0 + 1), ev.fund(a.party, T0 + 2), ev.fund(b.party, T0 + 3));
  assert.equal(partyIds(pact), [a.party, b.party, c.party]);
});

test('withdraw refunds deposit and bond as pending payouts and unconfirms the party', () => {
  const pact = run(two(), ev.fund(b.party, T0 + 1), ev.withdraw(b.party, T0 + 2));
  assert.is(pact.state, 'CREATED');
  assert.is(pact.stateNonce, 2);
  assert.equal(entry(pact, b), {
    party: b.party, deposit: usdc(1000), bond: usdc(100), required: true,
    confirmed: false, paidPot: '0', paidBond: '0', fundedAt: null, receipt: null, withdrawals: 1,
  });
  assert.equal(pact.payouts, [
    { party: b.party, kind: 'deposit', amount: '1000', key: `p_test:withdraw.2:deposit:${b.party}`, transition: 'withdraw.2', status: 'pending', railRef: null },
    { party: b.party, kind: 'bond', amount: '100', key: `p_test:withdraw.2:bond:${b.party}`, transition: 'withdraw.2', status: 'pending', railRef: null },
  ]);
});

test('withdraw of a zero deposit pays back only the bond', () => {
  const pact = run(two(), ev.fund(a.party, T0 + 1), ev.withdraw(a.party, T0 + 2));
  assert.equal(payoutTable(pact), { [`bond:${a.party}`]: '100' });
});

test('a party can fund again after withdrawing; the counter keeps counting and keys stay distinct', () => {
  let pact = run(two(), ev.fund(b.party, T0 + 1), ev.withdraw(b.party, T0 + 2), ev.fund(b.party, T0 + 3, 'rcpt-2'));
  assert.is(entry(pact, b).confirmed, true);
  assert.is(entry(pact, b).receipt, 'rcpt-2');
  assert.is(entry(pact, b).withdrawals, 1);
  pact = run(pact, ev.withdraw(b.party, T0 + 4));
  assert.is(entry(pact, b).withdrawals, 2);
  assert.equal(pact.payouts.map((p) => p.transition), ['withdraw.2', 'withdraw.2', 'withdraw.4', 'withdraw.4']);
  assert.is(new Set(pact.payouts.map((p) => p.key)).size, 4);
  assert.is(run(pact, ev.fund(a.party, T0 + 5), ev.fund(b.party, T0 + 6)).state, 'ACTIVE');
});

test('poke at fundBy cancels an underfunded pact and refunds only the confirmed parties', () => {
  const funded = run(two(), ev.fund(b.party, T0 + 1));
  const pact = run(funded, ev.poke(FUND_BY));
  assert.is(pact.state, 'CANCELLED');
  assert.is(pact.closedAt, FUND_BY);
  assert.equal(pact.settlement, {
    outcome: 'cancelled_fund_deadline',
    pot: [],
    depositRefunds: [{ party: b.party, amount: '1000' }],
    bondReturns: [{ party: b.party, amount: '100' }],
    bondForfeits: [],
  });
  assert.equal(payoutTable(pact, 'refund'), { [`deposit:${b.party}`]: '1000', [`bond:${b.party}`]: '100' });
});

test('poke at fundBy with nobody funded cancels with an empty settlement and no payouts', () => {
  const pact = run(two(), ev.poke(FUND_BY + 10));
  assert.is(pact.state, 'CANCELLED');
  assert.is(pact.settlement?.outcome, 'cancelled_fund_deadline');
  assert.equal(pact.settlement?.depositRefunds, []);
  assert.equal(pact.payouts, []);
});

test('poke at fundBy cancels when required parties funded but minParties is not met', () => {
  const pact = run(withOptionalC(3), ev.fund(a.party, T0 + 1), ev.fund(b.party, T0 + 2), ev.poke(FUND_BY));
  assert.is(pact.state, 'CANCELLED');
  assert.equal(pact.settlement?.depositRefunds.map((r) => r.party), [a.party, b.party]);
});

test('poke at fundBy activates a pact that meets the conditions, dropping unfunded optional parties', () => {
  // Funding activates as soon as the pact is ready, so a ready CREATED pact is built by hand here.
  const base = withOptionalC(2);
  const ready: Pact = {
    ...base,
    parties: base.parties.map((p) => (p.required ? { ...p, confirmed: true, paidPot: p.deposit.amount, paidBond: p.bond.amount } : p)),
  };
  const pact = run(ready, ev.poke(FUND_BY + 3));
  assert.is(pact.state, 'ACTIVE');
  assert.is(pact.activeAt, FUND_BY + 3);
  assert.is(pact.performBy, FUND_BY + 3 + PERFORM);
  assert.equal(partyIds(pact), [a.party, b.party]);
  assert.equal(pact.payouts, []);
});

test('poke before fundBy is not a transition', () => {
  assert.is(evolve(run(two(), ev.fund(b.party, T0 + 1)), ev.poke(FUND_BY - 1)), undefined);
});


test('after MAX_FUNDING_ROUNDS rounds, each withdrawn, a party may not fund again; withdrawing is never refused for it', () => {
  let pact = two();
  let at = T0;
  for (let round = 0; round < MAX_FUNDING_ROUNDS; round++) {
    assert.is(refusal(pact, cmd.fund(b.party, pact.stateNonce), ++at), undefined, `round ${round}`);
    pact = run(pact, ev.fund(b.party, at));
    assert.is(refusal(pact, cmd.withdraw(b.party, pact.stateNonce), ++at), undefined);
    pact = run(pact, ev.withdraw(b.party, at));
  }
  assert.is(refusal(pact, cmd.fund(b.party, pact.stateNonce), ++at)?.error, 'funding_rounds_exhausted');
  assert.is(evolve(pact, ev.fund(b.party, at)), undefined);
  assert.is(refusal(pact, cmd.fund(a.party, pact.stateNonce), at), undefined, 'the other party still funds');
  const cancelled = run(run(pact, ev.fund(a.party, at)), ev.poke(FUND_BY));
  assert.is(cancelled.state, 'CANCELLED', 'and the fund deadline still refunds it');
});

test.run();
