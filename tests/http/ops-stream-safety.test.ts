import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType, type StreamInfo } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { JOURNAL_STREAM } from '../../actors/subjects.js';
import { startNatsServer, type NatsServerProcess } from '../../runtime/nats-server.js';
import { forget, reapOnExit } from '../support/reaper.js';
import { ServiceProcess } from '../support/service-process.js';

// What a start must never do to a NATS: trim a journal that had no limit yet, claim replicas a single
// server cannot have, or touch the streams of a NATS whose journal it then refuses.

interface Context {
  root: string;
  nats: NatsServerProcess;
}

const test = suite<Context>('a start leaves NATS as it was when it refuses');

test.before.each(async (context) => {
  context.root = mkdtempSync(join(tmpdir(), 'pact-ops-streams-'));
  context.nats = await startNatsServer(join(context.root, 'nats'));
  reapOnExit(context.nats.pid);
});
test.after.each(async ({ root, nats }) => {
  await nats.stop();
  forget(nats.pid);
  rmSync(root, { recursive: true, force: true });
});

const serviceOn = (natsUrl: string, dataDir: string, env: Record<string, string> = {}) =>
  ServiceProcess.run(process.execPath, ['--import', 'tsx', 'runtime/main.ts'], { PACT_PORT: '0', WALLET_PORT: '0', PACT_DATA_DIR: dataDir, NATS_URL: natsUrl, ...env });

/** Runs the service until it listens or exits; resolves to its exit code (0 after a SIGTERM once listening). */
async function outcome(service: ServiceProcess): Promise<number | null> {
  await service.waitFor(/pact listening on|could not start/).catch(() => undefined);
  if (/pact listening on/.test(service.output)) service.child.kill('SIGTERM');
  return service.exited;
}

async function withJsm<T>(url: string, work: (jsm: Awaited<ReturnType<typeof jetstreamManager>>, nc: Awaited<ReturnType<typeof connect>>) => Promise<T>): Promise<T> {
  const nc = await connect({ servers: url });
  try {
    return await work(await jetstreamManager(nc), nc);
  } finally {
    await nc.close();
  }
}

const streamInfo = (url: string, name: string): Promise<StreamInfo> => withJsm(url, (jsm) => jsm.streams.info(name));

test('a journal made before it had a byte limit is not trimmed to a limit below what it holds', async ({ root, nats }) => {
  await withJsm(nats.url, async (jsm, nc) => {
    await jsm.streams.add({ name: JOURNAL_STREAM, subjects: ['pact.evt.>'], retention: RetentionPolicy.Limits, storage: StorageType.File });
    for (let i = 0; i < 20; i++) await jetstream(nc).publish(`pact.evt.p_legacy.${i}`, 'x'.repeat(500));
  });
  const before = (await streamInfo(nats.url, JOURNAL_STREAM)).state;

  const service = serviceOn(nats.url, join(root, 'data'), { PACT_JOURNAL_MAX_BYTES: '2000' });
  assert.is(await outcome(service), 1, service.output);
  assert.match(service.output, /would drop its oldest entries/);
  const after = await streamInfo(nats.url, JOURNAL_STREAM);
  assert.equal([after.state.first_seq, after.state.messages], [before.first_seq, before.messages], 'nothing was trimmed');
  assert.is(after.config.max_bytes, -1, 'the limit was left as it was');
});

test('a journal of the layout before each entry had a subject of its own is refused, not read', async ({ root, nats }) => {
  await withJsm(nats.url, async (jsm, nc) => {
    await jsm.streams.add({ name: JOURNAL_STREAM, subjects: ['pact.evt.>'], retention: RetentionPolicy.Limits, storage: StorageType.File });
    await jetstream(nc).publish(`pact.evt.p_${'1'.repeat(32)}`, '{}');
  });
  const service = serviceOn(nats.url, join(root, 'data'));
  assert.is(await outcome(service), 1, service.output);
  assert.match(service.output, new RegExp(`holds entries on pact\\.evt\\.p_1{32} and 0 more subjects of the layout before`));
  const journal = await streamInfo(nats.url, JOURNAL_STREAM);
  assert.equal([journal.state.messages, journal.config.max_bytes], [1, -1], 'the journal was left as it was');
  assert.equal(await withJsm(nats.url, async (jsm) => (await jsm.streams.names().next()) ?? []), [JOURNAL_STREAM], 'no other stream was made');
});

test('PACT_REPLICAS=3 on a single nats-server is refused, not pretended', async ({ root, nats }) => {
  const dataDir = join(root, 'data');
  assert.is(await outcome(serviceOn(nats.url, dataDir)), 0);
  const service = serviceOn(nats.url, dataDir, { PACT_REPLICAS: '3' });
  assert.is(await outcome(service), 1, service.output);
  assert.match(service.output, /PACT_REPLICAS=3 needs a NATS cluster/);
  assert.is((await streamInfo(nats.url, JOURNAL_STREAM)).config.num_replicas, 1);
});

test('a NATS whose journal is refused gets nothing created or changed', async ({ root, nats }) => {
  const dataDir = join(root, 'data');
  assert.is(await outcome(serviceOn(nats.url, dataDir)), 0);

  const empty = await startNatsServer(join(root, 'empty-nats'));
  reapOnExit(empty.pid);
  const other = await startNatsServer(join(root, 'other-nats'));
  reapOnExit(other.pid);
  try {
    const toEmpty = serviceOn(empty.url, dataDir);
    assert.is(await outcome(toEmpty), 1, toEmpty.output);
    assert.equal(await withJsm(empty.url, async (jsm) => (await jsm.streams.names().next()) ?? []), [], 'no stream was made');
    assert.match(toEmpty.output, /built from the journal .* holds no PACT_JOURNAL/);

    assert.is(await outcome(serviceOn(other.url, join(root, 'other-data'), { PACT_JOURNAL_MAX_BYTES: '100000' })), 0);
    const toOther = serviceOn(other.url, dataDir, { PACT_JOURNAL_MAX_BYTES: '200000' });
    assert.is(await outcome(toOther), 1, toOther.output);
    assert.match(toOther.output, /built from the journal .* holds/);
    assert.is((await streamInfo(other.url, JOURNAL_STREAM)).config.max_bytes, 100_000, 'the other journal kept its limit');
  } finally {
    for (const server of [empty, other]) {
      await server.stop();
      forget(server.pid);
    }
  }
});

test.run();
