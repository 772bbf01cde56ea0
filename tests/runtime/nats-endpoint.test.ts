import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../runtime/config.js';
import { natsEndpoint } from '../../runtime/nats-endpoint.js';
import { startNatsServer } from '../../runtime/nats-server.js';

const DEAD_URL = 'nats://127.0.0.1:1'; // nothing listens on port 1

const configFor = (dataDir: string, natsUrl?: string) => loadConfig({ PACT_DATA_DIR: dataDir, ...(natsUrl ? { NATS_URL: natsUrl } : {}) });

async function withTempDir(run: (dir: string) => Promise<void>) {
  const dir = mkdtempSync(join(tmpdir(), 'pact-nats-'));
  try {
    await run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('a given NATS_URL that answers is used as is, and one open to anonymous clients is said to be', async () => {
  await withTempDir(async (dir) => {
    const server = await startNatsServer(join(dir, 'nats'));
    try {
      const endpoint = await natsEndpoint(configFor(dir, server.url));
      assert.is(endpoint.url, server.url);
      assert.is(endpoint.stop, undefined, 'nothing of ours to stop');
      assert.match(endpoint.description, /without a user/);
    } finally {
      await server.stop();
    }
  });
});

test('a given NATS_URL that does not answer is a clear error, not a private server', async () => {
  await withTempDir(async (dir) => {
    try {
      await natsEndpoint(configFor(dir, DEAD_URL));
      assert.unreachable('should have thrown');
    } catch (error) {
      assert.match(String(error), /NATS at nats:\/\/127\.0\.0\.1:1 does not answer/);
    }
  });
});

test('without NATS_URL, a private nats-server with a user per role starts under the data dir and is reused', async () => {
  await withTempDir(async (dir) => {
    const first = await natsEndpoint(configFor(dir));
    try {
      assert.ok(first.stop, 'a private server was started');
      const host = first.credentials!.host;
      const nc = await connect({ servers: first.url, user: host.user, pass: host.password });
      assert.ok(nc.info?.jetstream, 'with JetStream');
      await nc.close();
      await connect({ servers: first.url, reconnect: false }).then(
        () => assert.unreachable('an anonymous client connected to the private server'),
        (error: unknown) => assert.match(String(error), /authorization/i),
      );
      const again = await natsEndpoint(configFor(dir));
      assert.is(again.url, first.url, 'a restart finds the private server still running');
      assert.equal(again.credentials, first.credentials, 'with the same role users');
    } finally {
      await first.stop?.();
    }
  });
});

test('a private nats-server running another version’s permissions is replaced, not reused', async () => {
  await withTempDir(async (dir) => {
    const first = await natsEndpoint(configFor(dir));
    let second: Awaited<ReturnType<typeof natsEndpoint>> | undefined;
    try {
      const authFile = join(dir, 'nats-auth.conf');
      writeFileSync(authFile, readFileSync(authFile, 'utf8').replaceAll('rails.address.>', 'older.subjects.>'));
      second = await natsEndpoint(configFor(dir));
      assert.match(second.description, '(started,');
      assert.match(readFileSync(authFile, 'utf8'), 'rails.address.>', 'the server runs this version’s permissions');
    } finally {
      await (second ?? first).stop?.();
    }
  });
});

test.run();
