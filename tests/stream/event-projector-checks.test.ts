import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { nodeSigner, signingHere } from '../../protocol/node-signer.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { inlineVerifier, type Check, type Verifier } from '../../protocol/verify-pool.js';
import { EventProjector } from '../../stream/event-projector.js';
import type { PublicEvent } from '../../stream/event.js';
import { EventStore } from '../../stream/event-store.js';
import { notificationOf, receivedAtOf } from '../../stream/pact-notifier.js';
import { storeEvent } from '../../stream/store-event.js';
import { streamEventProblem } from '../../stream/validate.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// The node's event projector takes what this node vouched for (its gateway's checked publishes, its
// notifier's notifications) without checking it again; anything else on the stream is checked, and a
// forgery is not stored. A notification is valid by construction, also from a node whose clock is behind.

interface Context {
  bench: JournalBench;
  store: EventStore;
  projector: EventProjector;
  verifier: Verifier & { calls: number };
}

const test = suite<Context>('event projector: vouched messages unchecked, the rest checked');
test.before.each(async (context) => {
  context.bench = await startJournalBench('event-checks');
  context.store = new EventStore(context.bench.level);
  const verifier = { calls: 0, verify: (check: Check) => (verifier.calls++, inlineVerifier.verify(check)), close: async () => undefined };
  context.verifier = verifier;
  context.projector = new EventProjector(context.bench.nats, context.store, { perHour: 100, exempt: server.party }, verifier, 'checks-node');
  await context.projector.start();
});
test.after.each(async ({ projector, bench }) => {
  await projector.stop();
  await bench.stop();
});

const server = generateKeyPair();
const pact = pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair()));
const parties = pact.parties.map((p) => p.party);
/** The notification of the pact's entry with `nonce` (each nonce makes another event), made at `at`. */
const notification = (nonce: number, at = Date.now()) => {
  const entry: JournalEntry = { pactId: pact.id, nonce, commandId: `c${nonce}`, event: { type: 'created', at, pact }, state: 'PROPOSED' };
  return notificationOf({ ...entry, state: 'PROPOSED' }, parties, signingHere(nodeSigner(server)));
};

async function stored({ bench, projector, store }: Context, event: PublicEvent, vouched: boolean): Promise<boolean> {
  const seq = await storeEvent(bench.nats.js, event, Date.now(), vouched ? projector : undefined);
  await projector.reached(seq, 5_000);
  const storedSeq = store.seqOf(event.id);
  return storedSeq === seq;
}

test('a notification this node vouched for is stored without a signature check', async (context) => {
  assert.ok(await stored(context, await notification(1), true));
  assert.is(context.verifier.calls, 0);
});

test('one it did not vouch for is checked before it is stored; a forged one is not stored', async (context) => {
  assert.ok(await stored(context, await notification(2), false));
  assert.is(context.verifier.calls, 1);
  const forged = { ...(await notification(3)), signature: (await notification(4)).signature };
  assert.not.ok(await stored(context, forged, false));
  assert.is(context.verifier.calls, 2);
});

test('a node whose clock is behind the entry takes its notification at the entry\'s time: every node\'s check passes it', async () => {
  const now = Date.now();
  const event = await notification(5, now + 2_000); // written by a host whose clock is 2 s ahead
  assert.ok(await streamEventProblem(event, now, server.party, inlineVerifier), 'stamped with this node\'s clock it would live over seven days');
  assert.is(receivedAtOf(event, now), now + 2_000);
  assert.is(await streamEventProblem(event, receivedAtOf(event, now), server.party, inlineVerifier), undefined);
  assert.is(receivedAtOf(event, now + 5_000), now + 5_000);
});

test.run();
