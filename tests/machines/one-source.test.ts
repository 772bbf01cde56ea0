// The machine's guards and `refusal` (decide.ts) must never disagree: over seeded random lifecycles, every
// command that `refusal` lets through changes the machine's snapshot when applied as its event, and every
// command it refuses leaves the snapshot exactly as it was.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { PactCommand } from '../../machines/pact/commands.js';
import { eventOf, refusal } from '../../machines/pact/decide.js';
import type { PactEvent } from '../../machines/pact/events.js';
import { evolve } from '../../machines/pact/evolve.js';
import type { FeeFrom, Pact, Share } from '../../machines/pact/types.js';
import type { PartyId } from '../../protocol/party.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { ev, evaluatorKey, HOUR_MS, pactFrom, partyKey, T0, usdc, verdictBody } from '../support/pacts.js';
import { prng, type Random } from '../support/prng.js';

const SEEDS = 400;
const STEPS = 40;
const outsider = partyKey(99);
const mallory = generateKeyPair();


function randomPact(random: Random): Pact {
  const keys = Array.from({ length: 2 + random.int(0, 3) }, (_, i) => partyKey(i + 1));
  const parties = keys.map((k, i) => ({ party: k.party, deposit: usdc(random.int(0, 2) * 500), bond: usdc(random.int(0, 1) * 50), required: i === 0 || random.next() < 0.7 }));
  return pactFrom({ rail: 'mock', parties, terms: { spec: 'random' }, minParties: 1 + random.int(0, parties.length - 1) });
}

function randomShares(random: Random, pact: Pact): Share[] {
  const candidates: PartyId[] = [...pact.parties.map((p) => p.party), outsider.party];
  const chosen = [...new Set(random.subset(candidates))];
  if (chosen.length === 0) return [{ party: random.pick(candidates), bp: 10_000 }];
  const shares = chosen.map((party) => ({ party, bp: Math.floor(10_000 / chosen.length) }));
  shares[0]!.bp += 10_000 - shares.reduce((sum, s) => sum + s.bp, 0) + (random.next() < 0.1 ? 1 : 0);
  return shares;
}

/** A command a party (or a stranger) might send now, on the current nonce. */
function randomCommand(random: Random, pact: Pact, at: number): PactCommand {
  const stateNonce = pact.stateNonce;
  const signer = random.next() < 0.1 ? outsider.party : random.pick(pact.parties).party;
  const kinds = { CREATED: ['fund', 'fund', 'fund', 'withdraw'], ACTIVE: ['propose', 'propose', 'cancel'], PROPOSED: ['cosign', 'object', 'cancel'] } as const;
  const likely = kinds[pact.state as keyof typeof kinds] ?? [];
  const all = ['fund', 'withdraw', 'propose', 'cosign', 'object', 'cancel', 'verdict'] as const;
  switch (random.next() < 0.6 && likely.length > 0 ? random.pick(likely) : random.pick(all)) {
    case 'fund':
      return { type: 'fund', signer, stateNonce, proof: null };
    case 'withdraw':
    case 'cosign':
      return { type: random.pick(['withdraw', 'cosign'] as const), signer, stateNonce };
    case 'propose':
      return { type: 'propose', signer: random.next() < 0.7 ? pact.proposer : signer, stateNonce, proposal: { evidence: [], distribution: randomShares(random, pact) } };
    case 'object':
      return { type: 'object', signer, stateNonce, reason: 'no' };
    case 'cancel': {
      const approvedBy = random.subset(pact.parties.map((p) => p.party));
      return { type: 'cancel', signer, stateNonce, approvedBy: [signer, ...approvedBy], expiresAt: at + random.int(0, 199) * HOUR_MS - HOUR_MS };
    }
    case 'verdict': {
      const feeFrom = random.pick(['proposer', 'objector', 'split'] as const satisfies readonly FeeFrom[]);
      const inputHash = random.next() < 0.8 ? (pact.inputHash ?? '0'.repeat(64)) : 'f'.repeat(64);
      const body = verdictBody(pact, at, randomShares(random, pact), feeFrom, random.next() < 0.8 ? evaluatorKey : mallory, inputHash);
      return { type: 'verdict', verdict: body };
    }
  }
}

const eventFor = (command: PactCommand, at: number): PactEvent =>
  command.type === 'fund' ? ev.fund(command.signer, at) : eventOf(command, at);

test('refusal and the machine agree on every command of seeded random lifecycles', () => {
  let accepted = 0;
  let refused = 0;
  for (let seed = 1; seed <= SEEDS; seed++) {
    const random = prng(seed);
    let pact = randomPact(random);
    let at = T0;
    for (let step = 0; step < STEPS; step++) {
      at += random.int(0, 7) === 0 ? random.int(0, 29) * HOUR_MS : random.int(0, 999);
      if (pact.state === 'SETTLED' || pact.state === 'CANCELLED') pact = { ...randomPact(random), createdAt: at, fundBy: at + 24 * HOUR_MS };
      const poked = evolve(pact, ev.poke(at));
      if (poked && random.next() < 0.5) pact = poked;
      const command = randomCommand(random, pact, at);
      const problem = refusal(pact, command, at);
      const next = evolve(pact, eventFor(command, at));
      const where = `seed ${seed} step ${step}: ${command.type} in ${pact.state} → ${problem?.error ?? 'accepted'}`;
      if (problem) {
        assert.is(next, undefined, `${where}, yet the machine applied it`);
        refused++;
      } else {
        assert.ok(next, `${where}, yet the machine did nothing`);
        assert.is(next.stateNonce, pact.stateNonce + 1, `${where}: the snapshot changed`);
        pact = next;
        accepted++;
      }
    }
  }
  assert.ok(accepted > 2_000 && refused > 2_000, `both sides exercised: ${accepted} accepted, ${refused} refused`);
});

test.run();
