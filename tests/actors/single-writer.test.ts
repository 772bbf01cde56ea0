import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Journal, type JournalEntry } from '../../actors/journal.js';
import { ExpectedSequenceMismatch } from '../../actors/stream-journal.js';
import type { AdmittedCommand, AdmittedRequest, CommandReply } from '../../actors/messages.js';
import { replayedPacts } from '../support/journal.js';
import { connectNats, type Nats } from '../../actors/nats.js';
import { PactActor, type ActorDeps } from '../../actors/pact-actor.js';
import { MemoryRecords } from '../support/memory-records.js';
import type { PactSpec } from '../../machines/pact/spec.js';
import type { Pact } from '../../machines/pact/types.js';
import { MockRail } from '../../rails/mock/mock-rail.js';
import { startNatsServer, type NatsServerProcess } from '../../runtime/nats-server.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { openLevel, type JsonLevel } from '../../storage/level.js';
import { policy, usdc } from '../support/pacts.js';

// Two actors for one pact (two hosts that both believe they own it, or a stale actor beside a fresh
// one) must never both write: the journal's compare-and-set lets one through and sends the other back
// to read the journal and decide again. Real nats-server and LevelDB.

interface Context {
  root: string;
  server: NatsServerProcess;
  nats: Nats;
  journal: Journal;
  levels: JsonLevel[];
  rail: MockRail;
}

const test = suite<Context>('one writer per pact');

test.before(async (context) => {
  context.root = mkdtempSync(join(tmpdir(), 'pact-writer-'));
  context.server = await startNatsServer(join(context.root, 'nats'));
  context.nats = await connectNats({ url: context.server.url });
  context.journal = new Journal(context.nats.publisher, context.nats.jsm);
  context.levels = [];
  context.rail = await MockRail.open(await level(context, 'rail'), 1_000_000n);
});
test.after(async ({ root, server, nats, levels }) => {
  await nats.nc.close();
  for (const l of levels) await l.close();
  await server.stop();
  rmSync(root, { recursive: true, force: true });
});

async function level(context: Context, name: string): Promise<JsonLevel> {
  const opened = await openLevel(join(context.root, name));
  context.levels.push(opened);
  return opened;
}

/** A host's view: the shared journal and rail, its own records. */
const hostDeps = (context: Context, records: MemoryRecords): ActorDeps =>
  ({ journal: context.journal, records, rails: new Map([['mock', context.rail]]), policy });

const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
const spec: PactSpec = {
  rail: 'mock',
  proposer: a.party,
  minParties: 3,
  terms: { spec: 'three-way' },
  parties: [a, b, c].map((k) => ({ party: k.party, deposit: usdc(1000), bond: usdc(100), required: true })),
};
let commands = 0;
const request = (command: AdmittedCommand): AdmittedRequest => ({ id: `cmd-${++commands}`, command });
const fund = (signer: typeof a, stateNonce: number) =>
  request({ type: 'fund', signer: signer.party, stateNonce, proof: { scheme: 'mock' } });
const funded = (reply: CommandReply) => (reply.ok ? reply.pact.parties.filter((p) => p.confirmed).length : -1);

test('a second actor holding a stale pact is refused by the journal and decides again', async (context) => {
  const pactId = `p_${'ab'.repeat(16)}`;
  const firstRecords = new MemoryRecords();
  const first = await PactActor.load(pactId, hostDeps(context, firstRecords));
  assert.ok((await first.handle(request({ type: 'create', spec, signer: a.party }), Date.now())).ok);
  const secondRecords = new MemoryRecords();
  secondRecords.byId.set(pactId, firstRecords.byId.get(pactId)!);
  const second = await PactActor.load(pactId, hostDeps(context, secondRecords)); // both hold nonce 0 now

  assert.is(funded(await first.handle(fund(a, 0), Date.now())), 1);
  const stale = await second.handle(fund(b, 0), Date.now());
  assert.equal(stale.ok ? 'applied' : stale.error.error, 'stateNonce_mismatch', 'decided again on the journal’s state');
  const next = await second.handle(fund(b, 1), Date.now());
  assert.is(funded(next), 2, 'the second actor now holds what the first wrote');

  const entries = await context.journal.entriesFrom(pactId, 0);
  assert.equal(entries.map((e) => e.value.nonce), [0, 1, 2]);
  assert.equal(replayedPacts(entries.map((e) => e.value)).map((p) => p.parties.filter((q) => q.confirmed).length), [0, 1, 2]);
  const collects = (await context.rail.operations()).filter((op) => op.kind === 'collect' && op.key.startsWith(pactId));
  assert.is(collects.length, 2, 'b’s refused attempt and its retry share one collect');
});

test('the journal refuses a different entry under the same nonce, and reports a repeated one', async ({ journal }) => {
  const pactId = `p_${'cd'.repeat(16)}`;
  const entry = (commandId: string): JournalEntry =>
    ({ pactId, nonce: 0, commandId, event: { type: 'created', at: 1, pact: {} as Pact } });
  const seq = await journal.append(entry('one'));
  for (const other of [entry('two'), entry('one')]) {
    try {
      await journal.append(other);
      assert.unreachable(`${other.commandId} was appended`);
    } catch (error) {
      assert.instance(error, ExpectedSequenceMismatch);
    }
  }
  assert.equal((await journal.entriesFrom(pactId, 0)).map((e) => [e.seq, e.value.commandId]), [[seq, 'one']]);
});

test('each entry has a position of its own: a read from a position stops at the first empty one', async ({ journal }) => {
  const pactId = `p_${'ef'.repeat(16)}`;
  const entry = (nonce: number): JournalEntry =>
    ({ pactId, nonce, commandId: `c${nonce}`, event: nonce === 0 ? { type: 'created', at: 1, pact: {} as Pact } : { type: 'poke', at: 1 } });
  const seqs = [];
  for (const nonce of [0, 1, 3]) seqs.push(await journal.append(entry(nonce)));
  assert.equal((await journal.entriesFrom(pactId, 0)).map((e) => [e.seq, e.value.nonce]), [[seqs[0], 0], [seqs[1], 1]]);
  assert.equal((await journal.entriesFrom(pactId, 2)).map((e) => e.value.nonce), []);
  assert.equal((await journal.entriesFrom(pactId, 3)).map((e) => [e.seq, e.value.nonce]), [[seqs[2], 3]]);
  try {
    await journal.append({ ...entry(1), commandId: 'other' });
    assert.unreachable('a second entry took position 1');
  } catch (error) {
    assert.instance(error, ExpectedSequenceMismatch);
  }
});

test.run();
