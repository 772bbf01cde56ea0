// Every pact's size is bounded, and journal entries carry the event and the signed call, never the record:
// so for the largest pact the limits allow, every way out (withdraw, each deadline's poke, mutual cancel,
// a verdict) makes an entry that fits well within NATS's 1 MiB message, and the machine applies it.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { entryOf, type JournalEntry } from '../../actors/journal.js';
import { jsonBytes } from '../../actors/json-bytes.js';
import type { PactEvent } from '../../machines/pact/events.js';
import { evolve } from '../../machines/pact/evolve.js';
import { MAX_PROPOSAL_BYTES, MAX_TERMS_BYTES, MAX_FUNDING_ROUNDS } from '../../machines/pact/limits.js';
import type { Pact, Share } from '../../machines/pact/types.js';
import type { Action, SignedCall } from '../../protocol/signed-call.js';
import { signed, signPayload, type KeyPair } from '../../protocol/sign.js';
import { ev, HOUR_MS, pactFrom, partyKey, run, T0, usdc } from '../support/pacts.js';

const MAX_PARTIES = 64;
const ENTRY_BUDGET = 512 * 1024; // half of NATS's default max_payload
const keys = Array.from({ length: MAX_PARTIES }, (_, i) => partyKey(i + 1));
const everyone = keys.map((k) => k.party);

/** 64 parties, terms at their limit, and every party through all its funding rounds but the last. */
function maximalPact(): Pact {
  const parties = keys.map((k) => ({ party: k.party, deposit: usdc('1000000000000'), bond: usdc('1000000000'), required: true }));
  const terms = { spec: 's'.repeat(MAX_TERMS_BYTES - 20) };
  let pact = pactFrom({ rail: 'mock', parties, terms, minParties: MAX_PARTIES });
  let at = T0;
  for (const party of everyone) {
    for (let round = 1; round < MAX_FUNDING_ROUNDS; round++) pact = run(pact, ev.fund(party, ++at), ev.withdraw(party, ++at));
  }
  return pact;
}

const envelope = (key: KeyPair, action: Action, pact: Pact, call: unknown): SignedCall =>
  signed({ action, call, pactId: pact.id, stateNonce: pact.stateNonce, issuedAt: T0, signer: key.party }, key);

/** The entry the actor would journal for `event` on `pact`, after checking the machine applies it. */
function wayOut(pact: Pact, event: PactEvent, signedCall?: SignedCall): JournalEntry {
  const next = evolve(pact, event);
  assert.ok(next, `${event.type} applies in ${pact.state}`);
  const entry = entryOf({ commandId: 'c', event, envelope: signedCall, previous: pact, next });
  const bytes = jsonBytes(entry).length; // as the journal appends it
  assert.ok(bytes < ENTRY_BUDGET, `${event.type} in ${pact.state}: ${bytes} bytes`);
  return entry;
}

function cancelCall(pact: Pact, expiresAt: number): SignedCall {
  const approval = { action: 'cancel', pactId: pact.id, stateNonce: pact.stateNonce, expiresAt };
  const sigs = keys.map((k) => ({ signer: k.party, sig: signPayload(approval, k) }));
  return envelope(keys[0]!, 'pacts.cancel', pact, { expiresAt, sigs });
}

test('every way out of the largest pact fits in a journal entry and applies', () => {
  const created = maximalPact();
  assert.ok(created.payouts.length >= MAX_PARTIES * (MAX_FUNDING_ROUNDS - 1) * 2, 'the history is as long as it gets before the last round');
  const at = created.updatedAt + 1;

  // CREATED: one party funds and withdraws; the fund deadline refunds whoever funded.
  const oneFunded = run(created, ev.fund(keys[0]!.party, at));
  wayOut(oneFunded, ev.withdraw(keys[0]!.party, at + 1), envelope(keys[0]!, 'pacts.withdraw', oneFunded, {}));
  const allButOne = run(created, ...everyone.slice(1).map((party, i) => ev.fund(party, at + i)));
  const refunded = wayOut(allButOne, ev.poke(allButOne.fundBy));
  assert.is(refunded.payouts?.items.length, (MAX_PARTIES - 1) * 2);

  // ACTIVE: mutual cancel with every party's approval, and the perform deadline.
  const active = run(allButOne, ev.fund(keys[0]!.party, at + MAX_PARTIES));
  assert.is(active.state, 'ACTIVE');
  const expiresAt = active.updatedAt + HOUR_MS;
  wayOut(active, ev.cancel(keys[0]!.party, active.updatedAt + 1, everyone, expiresAt), cancelCall(active, expiresAt));
  wayOut(active, ev.poke(active.performBy!));

  // PROPOSED with a proposal at its limit: mutual cancel, and the object deadline settles.
  const distribution: Share[] = everyone.map((party, i) => ({ party, bp: i === 0 ? 10_000 - 156 * (MAX_PARTIES - 1) : 156 }));
  const evidence = Array.from({ length: 16 }, (_, i) => ({ note: `${i}`.padEnd(Math.floor(MAX_PROPOSAL_BYTES / 16) - 600, 'e') }));
  const proposed = run(active, ev.propose(keys[0]!.party, active.updatedAt + 1, distribution, evidence));
  assert.ok(JSON.stringify(proposed.proposal).length <= MAX_PROPOSAL_BYTES);
  const cancelBy = proposed.updatedAt + HOUR_MS;
  wayOut(proposed, ev.cancel(keys[1]!.party, proposed.updatedAt + 1, everyone, cancelBy), cancelCall(proposed, cancelBy));
  const settled = wayOut(proposed, ev.poke(proposed.objectBy!));
  assert.is(settled.payouts?.items.length, MAX_PARTIES * 2, 'a pot share and a bond back for each party');

  // DISPUTED: the verdict deadline refunds everyone, and a verdict settles.
  const disputed = run(proposed, ev.object(keys[1]!.party, proposed.updatedAt + 1, 'r'.repeat(4_096)));
  wayOut(disputed, ev.poke(disputed.verdictBy!));
  wayOut(disputed, ev.verdict(disputed, disputed.updatedAt + 1, distribution, 'objector'));
});

test.run();
