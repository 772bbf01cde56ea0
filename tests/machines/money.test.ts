// Money rules (DECISIONS.md "Money, bonds, fees"): floor + largest remainder, forfeits, conservation.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { evolve } from '../../machines/pact/evolve.js';
import type { PactEvent } from '../../machines/pact/events.js';
import { sameDistribution } from '../../machines/pact/rules.js';
import { distributionSettlement, payoutsOf, potOf, splitPot, verdictForfeits } from '../../machines/pact/settlement.js';
import type { FeeFrom, Pact, PartySpec, Share } from '../../machines/pact/types.js';
import type { PartyId } from '../../protocol/party.js';
import {
  ev, feeRecipient, fundAll, pactFrom, partyKey, run, sumAmounts, T0, twoPartySpec, usdc,
} from '../support/pacts.js';
import { prng, type Random } from '../support/prng.js';

const keys = [1, 2, 3, 4, 5, 6].map(partyKey);
const [a, b] = [keys[0]!, keys[1]!];
const ids = keys.map((k) => k.party);
const shares = (...bps: number[]): Share[] => bps.map((bp, i) => ({ party: ids[i]!, bp }));
const amounts = (lines: { amount: string }[]) => lines.map((l) => l.amount);

// ---- splitPot ----

test('splitPot: pot 10 over 3333/3333/3334 gives the leftover unit to the largest remainder', () => {
  assert.equal(amounts(splitPot(10n, shares(3333, 3333, 3334))), ['3', '3', '4']);
});

test('splitPot: pot 1 over 5000/5000 goes to the first in distribution order', () => {
  assert.equal(amounts(splitPot(1n, shares(5000, 5000))), ['1', '0']);
  const reversed = [{ party: ids[1]!, bp: 5000 }, { party: ids[0]!, bp: 5000 }];
  assert.equal(splitPot(1n, reversed), [{ party: ids[1]!, amount: '1' }, { party: ids[0]!, amount: '0' }]);
});

test('splitPot: ties among equal remainders go in distribution order, after a larger remainder', () => {
  // floors 0/0/0, remainders 6668/6666/6666: the first unit to the first, the second to the second.
  assert.equal(amounts(splitPot(2n, shares(3334, 3333, 3333))), ['1', '1', '0']);
  // remainders 3333/3334/3333 → the middle share wins the only leftover unit.
  assert.equal(amounts(splitPot(1n, shares(3333, 3334, 3333))), ['0', '1', '0']);
});

test('splitPot: pot 0 gives every share zero; exact splits have no leftover', () => {
  assert.equal(amounts(splitPot(0n, shares(3333, 3333, 3334))), ['0', '0', '0']);
  assert.equal(amounts(splitPot(100n, shares(2500, 2500, 2500, 2500))), ['25', '25', '25', '25']);
  assert.equal(amounts(splitPot(999n, shares(10000, 0))), ['999', '0']);
});

test('splitPot: amounts far beyond 2^53 stay exact', () => {
  const pot = 10n ** 29n + 1n;
  assert.equal(amounts(splitPot(pot, shares(5000, 5000))), ['50000000000000000000000000001', '50000000000000000000000000000']);
});

// ---- forfeits and settlements ----

/** A two-party pact in DISPUTED where `b` objected, with the given bonds. */
function disputedWithBonds(bondA: number, bondB: number): Pact {
  const spec = twoPartySpec(a, b);
  spec.parties = [{ ...spec.parties[0]!, bond: usdc(bondA) }, { ...spec.parties[1]!, bond: usdc(bondB) }];
  return run(fundAll(pactFrom(spec)), ev.propose(a.party, T0 + 10, shares(10000)), ev.object(b.party, T0 + 11));
}

test('verdictForfeits: the loser’s whole bond, or floor(half) of each for split', () => {
  const pact = disputedWithBonds(101, 75);
  assert.equal([...verdictForfeits(pact, 'objector')], [[b.party, 75n]]);
  assert.equal([...verdictForfeits(pact, 'proposer')], [[a.party, 101n]]);
  assert.equal([...verdictForfeits(pact, 'split')], [[a.party, 50n], [b.party, 37n]]);
});

test('distributionSettlement: forfeits reduce bond returns and are listed; the pot ignores bonds', () => {
  const pact = disputedWithBonds(101, 75);
  const forfeits = new Map<PartyId, bigint>([[b.party, 75n]]);
  assert.equal(distributionSettlement(pact, 'settled_by_verdict', shares(2500, 7500), forfeits), {
    outcome: 'settled_by_verdict',
    pot: [{ party: a.party, amount: '250' }, { party: b.party, amount: '750' }],
    depositRefunds: [],
    bondReturns: [{ party: a.party, amount: '101' }, { party: b.party, amount: '0' }],
    bondForfeits: [{ party: b.party, amount: '75' }],
  });
  assert.is(potOf(pact), 1000n);
});

test('payoutsOf: zero lines are left out and all forfeits become one fee payout to the recipient', () => {
  const pact = disputedWithBonds(101, 75);
  const payouts = payoutsOf(pact, 'verdict.5', {
    pot: [{ party: a.party, amount: '0' }, { party: b.party, amount: '1000' }],
    depositRefunds: [{ party: a.party, amount: '0' }],
    bondReturns: [{ party: a.party, amount: '51' }, { party: b.party, amount: '38' }],
    bondForfeits: [{ party: a.party, amount: '50' }, { party: b.party, amount: '37' }],
  });
  assert.equal(payouts.map((p) => [p.kind, p.party, p.amount]), [
    ['pot', b.party, '1000'], ['bond', a.party, '51'], ['bond', b.party, '38'], ['fee', feeRecipient.party, '87'],
  ]);
  assert.equal(payouts[3], {
    party: feeRecipient.party, kind: 'fee', amount: '87', key: `p_test:verdict.5:fee:${feeRecipient.party}`,
    transition: 'verdict.5', status: 'pending', railRef: null,
  });
});

// ---- property: conservation over random pacts ----

type Rng = Random;

/** `n` non-negative integers summing to 10000, zeros and lopsided splits included. */
function randomBps(rng: Rng, n: number): number[] {
  const cuts = Array.from({ length: n - 1 }, () => rng.int(0, 10000)).sort((x, y) => x - y);
  return [...cuts, 10000].map((cut, i) => cut - (i === 0 ? 0 : cuts[i - 1]!));
}

const randomAmount = (rng: Rng) =>
  rng.pick([0, 1, 2, 3, 7, 99, 101, rng.int(0, 1000), rng.int(0, 10 ** 9), 2 ** 53 + rng.int(0, 99)]);

test('property: splitPot sums to the pot, rounds each share down or up by one, and favours larger remainders then order', () => {
  const rng = prng(7);
  for (let i = 0; i < 2000; i += 1) {
    const pot = BigInt(randomAmount(rng));
    const bps = randomBps(rng, rng.int(1, 6));
    const split = splitPot(pot, shares(...bps)).map((l) => BigInt(l.amount));
    assert.is(split.reduce((x, y) => x + y, 0n), pot, `pot ${pot} over ${bps}`);
    const floors = bps.map((bp) => (pot * BigInt(bp)) / 10000n);
    const rems = bps.map((bp) => (pot * BigInt(bp)) % 10000n);
    const upped = split.map((amount, j) => amount - floors[j]!);
    assert.ok(upped.every((u) => u === 0n || u === 1n), `pot ${pot} over ${bps}: ${split}`);
    upped.forEach((u, j) => {
      if (u === 0n) return;
      // No share left at its floor may beat one that was rounded up.
      upped.forEach((v, k) => {
        if (v === 0n) assert.ok(rems[k]! < rems[j]! || (rems[k] === rems[j] && k > j), `pot ${pot} over ${bps}`);
      });
    });
  }
});

function randomPact(rng: Rng): Pact {
  const n = rng.int(2, 5);
  const parties: PartySpec[] = ids.slice(0, n).map((party) => ({
    party, deposit: usdc(randomAmount(rng)), bond: usdc(randomAmount(rng)), required: true,
  }));
  return pactFrom({ rail: 'mock', parties, proposer: rng.pick(ids.slice(0, n)), terms: { spec: 'random' }, minParties: n });
}

/** Applies `event`, checking that an accepted event advances the nonce by exactly one. */
function step(pact: Pact, event: PactEvent): Pact {
  const next = evolve(pact, event);
  assert.ok(next, `${event.type} refused in ${pact.state}`);
  assert.is(next.stateNonce, pact.stateNonce + 1, `nonce after ${event.type}`);
  return next;
}

const ENDINGS = ['cosign', 'silence', 'objector', 'proposer', 'split', 'verdictTimeout', 'performTimeout', 'cancelActive', 'cancelProposed', 'fundTimeout'] as const;
type Ending = (typeof ENDINGS)[number];

/** Drives a random pact to a terminal state along `ending`, with a withdraw-and-refund round on the way. */
function driveTo(pact0: Pact, ending: Ending, rng: Rng): Pact {
  const parties = pact0.parties.map((p) => p.party);
  const others = parties.filter((p) => p !== pact0.proposer);
  let pact = step(pact0, ev.fund(parties[0]!, T0 + 1));
  pact = step(pact, ev.withdraw(parties[0]!, T0 + 2));
  if (ending === 'fundTimeout') return step(step(pact, ev.fund(parties[1]!, T0 + 3)), ev.poke(pact.fundBy));
  parties.forEach((p, i) => (pact = step(pact, ev.fund(p, T0 + 10 + i))));
  assert.is(pact.state, 'ACTIVE');
  const all = () => pact.parties.map((p) => p.party);
  if (ending === 'performTimeout') return step(pact, ev.poke(pact.performBy!));
  if (ending === 'cancelActive') return step(pact, ev.cancel(pact.proposer, T0 + 50, all(), pact.performBy!));
  const distribution = randomBps(rng, parties.length).map((bp, i) => ({ party: parties[i]!, bp }));
  pact = step(pact, ev.propose(pact.proposer, T0 + 100, distribution));
  if (ending === 'silence') return step(pact, ev.poke(pact.objectBy!));
  if (ending === 'cancelProposed') return step(pact, ev.cancel(pact.proposer, T0 + 150, all(), pact.objectBy!));
  if (ending === 'cosign') {
    others.forEach((p, i) => (pact = step(pact, ev.cosign(p, T0 + 200 + i))));
    return pact;
  }
  pact = step(pact, ev.object(rng.pick(others), T0 + 300));
  if (ending === 'verdictTimeout') return step(pact, ev.poke(pact.verdictBy!));
  // Upholding the proposal pays it as proposed; upholding the objection changes it (verdictProblem).
  let verdictShares = randomBps(rng, parties.length).map((bp, i) => ({ party: parties[i]!, bp }));
  if (ending === 'objector') verdictShares = distribution;
  while (ending === 'proposer' && sameDistribution(verdictShares, distribution)) {
    verdictShares = randomBps(rng, parties.length).map((bp, i) => ({ party: parties[i]!, bp }));
  }
  return step(pact, ev.verdict(pact, T0 + 400, verdictShares, ending as FeeFrom));
}

test('property: payouts of every outcome sum exactly to pot + bonds; keys are unique and well formed', () => {
  const rng = prng(20_240_601);
  for (let i = 0; i < 400; i += 1) {
    const ending = ENDINGS[i % ENDINGS.length]!;
    const start = randomPact(rng);
    const final = driveTo(start, ending, rng);
    assert.ok(final.state === 'SETTLED' || final.state === 'CANCELLED', `${ending} ended in ${final.state}`);
    // Everything paid in comes out, no more and no less; the first party's withdrawn round came out first.
    const stake = start.parties.map((p) => BigInt(p.deposit.amount) + BigInt(p.bond.amount));
    const inEscrow = ending === 'fundTimeout' ? stake[1]! : stake.reduce((x, y) => x + y, 0n);
    assert.is(sumAmounts(final.payouts), inEscrow + stake[0]!, `case ${i} (${ending})`);
    const closing = final.payouts.filter((p) => !p.transition.startsWith('withdraw.'));
    assert.is(sumAmounts(closing), inEscrow, `closing payouts of case ${i} (${ending})`);
    assert.is(new Set(final.payouts.map((p) => p.key)).size, final.payouts.length, `duplicate key in case ${i}`);
    for (const p of final.payouts) {
      assert.match(p.amount, /^[1-9][0-9]*$/);
      assert.is(p.key, `${final.id}:${p.transition}:${p.kind}:${p.party}`);
      assert.match(p.transition, /^(withdraw|settle|verdict|refund|cancel)\.[0-9]+$/);
    }
  }
});

test.run();
