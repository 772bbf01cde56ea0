import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { JOURNAL_STREAM } from '../../actors/subjects.js';
import { nodeSigner, signingHere, type AsyncSigner } from '../../protocol/node-signer.js';
import { generateKeyPair } from '../../protocol/sign.js';
import type { PublicEvent } from '../../stream/event.js';
import { EventStore } from '../../stream/event-store.js';
import { PactNotifier } from '../../stream/pact-notifier.js';
import { NotifiedParties } from '../../stream/notified-parties.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';
import { Projector } from '../../projection/projector.js';
import { ReadModel } from '../../projection/read-model.js';
import type { Clock } from '../../runtime/clock.js';
import { MAX_EVENT_LIFETIME_MS } from '../../stream/event.js';

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

/** A notifier on the context's journal and store; `clock` is the node's (the machine's by default), `signer` what signs its notifications. */
function notifierOf({ bench, store, projector, published, notifiers }: Context, clock: Clock = { now: () => Date.now() }, signer: AsyncSigner = signingHere(nodeSigner(server))): PactNotifier {
  const publish = async (event: PublicEvent) => void published.push(event);
  const notifier = new PactNotifier(bench.nats, store, new NotifiedParties(bench.level), publish, signer, clock, projector.journalTap);
  notifiers.push(notifier);
  return notifier;
}

/** Appends the pact's entry of `nonce` (its creation at 0) with a state change; resolves to its sequence. */
function appendEntry({ bench }: Context, nonce: number): Promise<number> {
  const event = nonce === 0 ? { type: 'created', at, pact } : { type: 'poke', at: at + nonce }; // past its funding deadline: cancelled
  const entry = { pactId: pact.id, nonce, commandId: `command-${nonce}`, event, state: nonce === 0 ? 'PROPOSED' : 'CANCELLED' } as JournalEntry;
  return bench.journal.append(entry);
}

/** The server's signer, keeping in `signed` every payload it is asked to sign. */
function countingSigner(signed: unknown[]): AsyncSigner {
  const signer = signingHere(nodeSigner(server));
  return { party: signer.party, sign: (payload) => (signed.push(payload), signer.sign(payload)) };
}

/** A node's time past the journal's messages by more than an event's lifetime and the notifier's hour for nats-server's clock. */
const pastTheStartsMargin = () => Date.now() + MAX_EVENT_LIFETIME_MS + 2 * 60 * 60 * 1000;

/** Where the notifier reads the journal from, each time, through a consumer of its own. */
function journalReads({ bench }: Context): number[] {
  const readFrom: number[] = [];
  const consumers = bench.nats.js.consumers;
  const get = consumers.get.bind(consumers);
  consumers.get = ((stream: string, options?: { opt_start_seq?: number }) => {
    if (options?.opt_start_seq !== undefined) readFrom.push(options.opt_start_seq);
    return get(stream, options as never);
  }) as typeof consumers.get;
  return readFrom;
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

test('a notifier with no position starts past the entries too old to notify: it neither reads nor signs for them', async (context) => {
  await appendEntry(context, 0);
  const old = await appendEntry(context, 1);
  const later = pastTheStartsMargin();
  const signed: unknown[] = [];
  const counting = countingSigner(signed);
  const readFrom = journalReads(context);
  await notifierOf(context, { now: () => later }, counting).start();

  const another = { ...pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair())), id: 'p_another' };
  const live = await context.bench.journal.append({ pactId: another.id, nonce: 0, commandId: 'another', event: { type: 'created', at: later, pact: another }, state: 'PROPOSED' } as JournalEntry);
  await until('the live notification', () => context.published.length, (n) => n === 1);
  assert.equal(context.published.map((event) => (event.body as { pactId: string }).pactId), [another.id]);
  assert.is(signed.length, 1);
  assert.ok(readFrom.every((seq) => seq > old), `read the journal from ${readFrom.join(', ')}`);
  assert.ok(await until('position', () => context.store.notifiedUpTo(), (seq) => seq === live) > old);
});

test('a node whose clock was moved on past an event\'s lifetime still notifies what it journaled with that clock', async (context) => {
  const moved = { now: () => Date.now() + MAX_EVENT_LIFETIME_MS + 24 * 60 * 60 * 1000 }; // as the test hooks move it, for good
  const journaled = (nonce: number) => context.bench.journal.append({ pactId: pact.id, nonce, commandId: `moved-${nonce}`, event: nonce === 0 ? { type: 'created', at: moved.now(), pact } : { type: 'poke', at: moved.now() }, state: nonce === 0 ? 'PROPOSED' : 'CANCELLED' } as JournalEntry);
  await journaled(0);
  const first = notifierOf(context, moved);
  await first.start();
  await until('the creation notified', () => context.published.length, (n) => n === 1);
  await first.stop();

  await journaled(1); // while the node is down
  await notifierOf(context, moved).start();
  await until('the cancellation notified', () => context.published.length, (n) => n === 2);
  assert.equal(context.published.map((event) => event.kind), ['pact.PROPOSED', 'pact.CANCELLED']);
});

test('an entry whose notification has expired makes none: neither signed for nor its parties read back', async (context) => {
  const first = await appendEntry(context, 0);
  await context.bench.nats.jsm.streams.deleteMessage(JOURNAL_STREAM, first); // reading the parties back would fail
  const second = await appendEntry(context, 1);
  const signed: unknown[] = [];
  const counting = countingSigner(signed);
  // Both expired, and stored too recently for the start to skip them by nats-server's times.
  await notifierOf(context, { now: () => at + MAX_EVENT_LIFETIME_MS + 30 * 60 * 1000 }, counting).start();
  assert.is(await until('position', () => context.store.notifiedUpTo(), (seq) => seq === second), second);
  assert.equal([signed.length, context.published.length], [0, 0]);
});

test('a start that cannot ask nats-server where the old entries end skips nothing: it reads on from its position', async (context) => {
  await appendEntry(context, 0);
  const second = await appendEntry(context, 1);
  const readFrom = journalReads(context);
  const streams = context.bench.nats.jsm.streams;
  const info = streams.info.bind(streams);
  let refused = 0;
  streams.info = ((...args: Parameters<typeof info>) => (refused++ === 0 ? Promise.reject(new Error('timeout')) : info(...args))) as typeof info;
  await notifierOf(context, { now: pastTheStartsMargin }).start();
  assert.is(await until('position', () => context.store.notifiedUpTo(), (seq) => seq === second), second);
  assert.equal(readFrom, [1]);
});

test.run();
