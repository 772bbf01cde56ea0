import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DiscardPolicy, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connectClient } from '../../actors/nats.js';
import type { Nats } from '../../actors/nats.js';
import { RAIL_ADDRESSES, RAILS_STREAM } from '../../actors/subjects.js';
import { RailAddressBook, type BoundAddress } from '../../rails/address-book.js';
import { startNatsServer, type NatsServerProcess } from '../../runtime/nats-server.js';
import { forget, reapOnExit } from '../support/reaper.js';

// First write wins on its own, not only within JetStream's duplicate window: here the window is one second,
// and a second address bound after it is still refused, with one message in the stream.

const test = suite<{ root: string; server: NatsServerProcess; nats: Nats; book: RailAddressBook }>('rail address book');
test.before(async (context) => {
  context.root = mkdtempSync(join(tmpdir(), 'pact-rail-addresses-'));
  context.server = await startNatsServer(join(context.root, 'nats'));
  reapOnExit(context.server.pid);
  context.nats = await connectClient(context.server.url, undefined, 'host');
  await context.nats.jsm.streams.add({
    name: RAILS_STREAM,
    subjects: [RAIL_ADDRESSES],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    discard: DiscardPolicy.New,
    duplicate_window: 1_000_000_000, // one second, in nanoseconds
  });
  context.book = new RailAddressBook(context.nats.publisher, context.nats.jsm);
});
test.after(async ({ root, server, nats }) => {
  await nats?.nc.close();
  await server?.stop();
  forget(server?.pid);
  rmSync(root, { recursive: true, force: true });
});

const binding = (address: string, at: number): BoundAddress => ({
  rail: 'mock',
  party: 'ed25519:8TBPvsYJFCqjqbN3rQFX1eXo5pQBK3LWavp4soEhsr7x',
  address,
  at,
  call: {} as BoundAddress['call'],
});

test('after the duplicate window, another address is a conflict and the first stays the only one', async ({ nats, book }) => {
  const first = await book.bind(binding('first', 1));
  assert.ok('bound' in first && first.fresh);
  await new Promise((resolve) => setTimeout(resolve, 1_500));
  const second = await book.bind(binding('second', 2));
  assert.ok('conflict' in second, JSON.stringify(second));
  assert.is(second.conflict.address, 'first');
  const again = await book.bind(binding('first', 3));
  assert.ok('bound' in again && !again.fresh && again.bound.at === 1, 'the same address again answers with the first binding');
  assert.is((await nats.jsm.streams.info(RAILS_STREAM)).state.messages, 1);
  assert.is((await book.addressOf('mock', binding('x', 0).party))?.address, 'first');
});

test.run();
