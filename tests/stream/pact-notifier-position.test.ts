import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { JOURNAL_STREAM } from '../../actors/subjects.js';
import { nodeSigner, signingHere } from '../../protocol/node-signer.js';
import { generateKeyPair } from '../../protocol/sign.js';
import type { PublicEvent } from '../../stream/event.js';
import { EventStore } from '../../stream/event-store.js';
import { PactNotifier } from '../../stream/pact-notifier.js';
import { NotifiedParties } from '../../stream/notified-parties.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';
import { Projector } from '../../projection/projector.js';
import { ReadModel } from '../../projection/read-model.js';

// The notifier keeps its journal position in the event store: not after every entry of a quiet node, but
// once it has been idle a moment, and when it stops. A notifier started again goes on from there.

interface Context {
  bench: JournalBench;
  store: EventStore;
  /** The node's projector, which the notifier hears the journal from. */
  projector: Projector;
  published: PublicEvent[];
  /** Every notifier a test started: stopped after it, failed or not. */
  notifiers: PactNotifier[];
}

const test = suite<Context>('pact notifier: its position');
test.before.each(async (context) => {
  context.bench = await startJournalBench('notifier-position');
  context.store = new EventStore(context.bench.level);
  await context.store.open('test stream');
  const readModel = new ReadModel(context.bench.level);
  await readModel.open();
  context.projector = new Projector(context.bench.nats, readModel, 'position-node');
  await context.projector.start();
  context.published = [];
  context.notifiers = [];
});
test.after.each(async ({ bench, projector, notifiers }) => {
  for (const notifier of notifiers) await notifier.stop();
  await projector.stop();
  await bench.stop();
});

const server = generateKeyPair();
const pact = pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair()));
const at = Date.now();

function notifierOf({ bench, store, projector, published, notifiers }: Context): PactNotifier {
  const publish = async (event: PublicEvent) => void published.push(event);
  const notifier = new PactNotifier(bench.nats, store, new NotifiedParties(bench.level), publish, signingHere(nodeSigner(server)), { now: () => Date.now() }, projector.journalTap);
  notifiers.push(notifier);
  return notifier;
}

/** Appends the pact's entry of `nonce` (its creation at 0) with a state change; resolves to its sequence. */
function appendEntry({ bench }: Context, nonce: number): Promise<number> {
  const event = nonce === 0 ? { type: 'created', at, pact } : { type: 'poke', at: at + nonce }; // past its funding deadline: cancelled
  const entry = { pactId: pact.id, nonce, commandId: `command-${nonce}`, event, state: nonce === 0 ? 'PROPOSED' : 'CANCELLED' } as JournalEntry;
  return bench.journal.append(entry);
}

async function until<T>(what: string, value: () => Promise<T> | T, wanted: (value: T) => boolean): Promise<T> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const now = await value();
    if (wanted(now)) return now;
    if (Date.now() > deadline) throw new Error(`${what}: still ${String(now)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Appends the pact's creation, lets a notifier notify it and stops that notifier; resolves to the creation's sequence. */
async function creationNotifiedThenStopped(context: Context): Promise<number> {
  const first = await appendEntry(context, 0);
  const notifier = notifierOf(context);
  await notifier.start();
  await until('notification', () => context.published.length, (n) => n === 1);
  await notifier.stop();
  return first;
}

test('once the notifier is idle, its position is written', async (context) => {
  await appendEntry(context, 0);
  const second = await appendEntry(context, 1);
  const notifier = notifierOf(context);
  await notifier.start();
  await until('notifications', () => context.published.length, (n) => n === 2);
  assert.is(await until('position', () => context.store.notifiedUpTo(), (seq) => seq === second), second);
});

test('stop writes the position; a notifier started again notifies only what came after it', async (context) => {
  const first = await creationNotifiedThenStopped(context);
  assert.is(await context.store.notifiedUpTo(), first);

  const again = notifierOf(context);
  await again.start();
  await appendEntry(context, 1);
  await until('notification after the restart', () => context.published.length, (n) => n >= 2);
  await new Promise((resolve) => setTimeout(resolve, 300)); // room for a wrong second notification of the creation
  assert.equal(context.published.map((event) => event.kind), ['pact.PROPOSED', 'pact.CANCELLED']);
});

test('a notifier started again has the parties of a pact created before: it does not read the creation back', async (context) => {
  const first = await creationNotifiedThenStopped(context);
  await context.bench.nats.jsm.streams.deleteMessage(JOURNAL_STREAM, first); // reading it back would fail now

  await notifierOf(context).start(); // parties kept in memory are gone with the old notifier
  await appendEntry(context, 1);
  await until('notification after the restart', () => context.published.length, (n) => n === 2);
  assert.equal(context.published[1]!.kind, 'pact.CANCELLED');
  assert.equal((context.published[1] as { recipients?: string[] }).recipients, pact.parties.map((p) => p.party));
});

test.run();
