import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CMD_STREAM, JOURNAL_STREAM, LEASE_BUCKET } from '../../actors/subjects.js';
import { startNatsCluster } from '../support/nats-cluster.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { ServiceProcess } from '../support/service-process.js';
import { Stack } from '../support/stack.js';

// The journal's limits are the operator's: a full journal refuses writes (503, nothing lost, reads go
// on) until the limit is raised, and PACT_REPLICAS and PACT_JOURNAL_MAX_BYTES reach streams that exist.

async function streamInfo(natsUrl: string, stream: string) {
  const nc = await connect({ servers: natsUrl.split(',') });
  try {
    return await (await jetstreamManager(nc)).streams.info(stream);
  } finally {
    await nc.close();
  }
}

const streamConfig = async (natsUrl: string, stream: string) => (await streamInfo(natsUrl, stream)).config;

test('a full journal refuses writes with 503 and loses nothing; raising the limit lets them in again', async () => {
  const stack = await Stack.start({ env: { PACT_JOURNAL_MAX_BYTES: '30000' } });
  try {
    assert.is((await streamConfig(stack.natsUrl, JOURNAL_STREAM)).max_bytes, 30_000);
    const created: string[] = [];
    let refused;
    for (let i = 0; i < 100 && !refused; i++) {
      const { seller, buyer } = newParties();
      const response = await stack.client.create(seller, tradeSpec(seller, buyer));
      if (response.status === 200) created.push(response.body.pact.id);
      else refused = response;
    }
    assert.ok(refused, 'the journal filled up');
    assert.is(refused!.status, 503, JSON.stringify(refused!.body));
    assert.is((refused!.body as any).error, 'unavailable');
    for (const id of created) assert.is((await stack.client.get(id)).status, 200, 'every acknowledged pact is still there');

    const held = (await streamInfo(stack.natsUrl, JOURNAL_STREAM)).state;
    await stack.kill('SIGTERM');
    const shrunk = ServiceProcess.run(process.execPath, ['--import', 'tsx', 'runtime/main.ts'], {
      PACT_PORT: '0', WALLET_PORT: '0', PACT_DATA_DIR: stack.dataDir, NATS_URL: stack.natsUrl, PACT_JOURNAL_MAX_BYTES: '1000',
    });
    assert.is(await shrunk.exited, 1, 'a limit below what the journal holds is refused');
    assert.match(shrunk.output, /would drop its oldest entries/);
    assert.equal((await streamInfo(stack.natsUrl, JOURNAL_STREAM)).state.first_seq, held.first_seq, 'and nothing was dropped');

    await stack.restartWith({ PACT_JOURNAL_MAX_BYTES: String(64 * 1024 * 1024) });
    assert.is((await streamConfig(stack.natsUrl, JOURNAL_STREAM)).max_bytes, 64 * 1024 * 1024);
    const { seller, buyer } = newParties();
    assert.is((await stack.client.create(seller, tradeSpec(seller, buyer))).status, 200);
    for (const id of created) assert.is((await stack.client.get(id)).status, 200);
  } finally {
    await stack.stop();
  }
});

test('PACT_REPLICAS=3 at a restart brings existing streams and the lease bucket to three replicas', async () => {
  const root = mkdtempSync(join(tmpdir(), 'pact-replicas-'));
  const cluster = await startNatsCluster(root);
  const stack = await Stack.start({ natsUrl: cluster.url });
  try {
    assert.is((await streamConfig(cluster.url, JOURNAL_STREAM)).num_replicas, 1);
    await stack.restartWith({ PACT_REPLICAS: '3' });
    for (const stream of [CMD_STREAM, JOURNAL_STREAM, `KV_${LEASE_BUCKET}`]) {
      assert.is((await streamConfig(cluster.url, stream)).num_replicas, 3, stream);
    }
    const { seller, buyer } = newParties();
    assert.is((await stack.client.create(seller, tradeSpec(seller, buyer))).status, 200, 'and the service goes on');
  } finally {
    await stack.stop();
    await cluster.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
