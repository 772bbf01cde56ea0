import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { jetstreamManager } from '@nats-io/jetstream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { connectOptionsOf, generateCredentials, type NatsCredentials } from '../../actors/nats-roles.js';
import { JOURNAL_STREAM } from '../../actors/subjects.js';
import { assertNothingAcknowledgedLost, assertPaidExactlyOnce, finishAll, startTrade, step, type Tracked } from '../support/lifecycle-driver.js';
import { startNatsCluster, type NatsCluster } from '../support/nats-cluster.js';
import { Stack } from '../support/stack.js';

// The service on the 3-node JetStream cluster of deploy/nats-cluster (streams and the lease bucket with 3
// replicas). Killing the node that leads the journal stream must lose nothing acknowledged; the service
// goes on once the cluster has a new leader. Every role connects as its own NATS user, as deployed.

const TRADES = 6;
/**
 * Time each trade may take while the cluster elects leaders: after the kill, and also at the start, when a
 * cluster just formed may still move a stream's leader under load (a publish then waits out its timeout
 * and the command is answered 503 after PACT_COMMAND_TIMEOUT_MS, 10 s). A host that stays stuck still fails.
 */
const ACROSS_ELECTIONS_MS = 30_000;

const test = suite<{ root: string; credentials: NatsCredentials; cluster: NatsCluster; stack: Stack }>('on a 3-node NATS cluster');

test.before(async (context) => {
  context.root = mkdtempSync(join(tmpdir(), 'pact-cluster-'));
  context.credentials = generateCredentials();
  const credentialsFile = join(context.root, 'credentials.json');
  writeFileSync(credentialsFile, JSON.stringify(context.credentials));
  context.cluster = await startNatsCluster(context.root, context.credentials);
  context.stack = await Stack.start({ natsUrl: context.cluster.url, env: { PACT_REPLICAS: '3', PACT_NATS_CREDENTIALS: credentialsFile } });
});
test.after(async ({ root, cluster, stack }) => {
  await stack.stop();
  await cluster.stop();
  rmSync(root, { recursive: true, force: true });
});

/** The journal's leader, asked again for up to 30 s while JetStream does not answer (it may still be electing). */
async function journalLeader(cluster: NatsCluster, reader: NatsCredentials['reader']): Promise<string> {
  const nc = await connect({ servers: cluster.url.split(','), ...connectOptionsOf('reader', reader) });
  try {
    const info = await untilAnswered(async () => (await jetstreamManager(nc)).streams.info(JOURNAL_STREAM));
    assert.is(info.config.num_replicas, 3);
    return info.cluster!.leader!;
  } finally {
    await nc.close();
  }
}

async function untilAnswered<T>(ask: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await ask();
    } catch (error) {
      if (!/timeout/i.test(String(error)) || Date.now() > deadline) throw error;
    }
  }
}

async function startTrades(stack: Stack): Promise<Tracked[]> {
  const trades: Tracked[] = [];
  for (let i = 0; i < TRADES; i++) {
    const t = await startTrade(stack);
    assert.ok(t, 'create answered');
    trades.push(t);
  }
  return trades;
}

test('losing the journal leader loses nothing acknowledged and the service goes on', async ({ cluster, credentials, stack }) => {
  const settledBefore = await startTrades(stack);
  await finishAll(stack, settledBefore, ACROSS_ELECTIONS_MS);
  const halfway = await startTrades(stack);
  for (const t of halfway) await step(stack, t); // each has one fund in

  const leader = await journalLeader(cluster, credentials.reader);
  const node = cluster.nodes[Number(leader.replace('pact-n', '')) - 1]!;
  process.kill(node.pid, 'SIGKILL');

  await assertNothingAcknowledgedLost(stack, [...settledBefore, ...halfway]);
  await finishAll(stack, halfway, ACROSS_ELECTIONS_MS);
  const after = await startTrades(stack);
  await finishAll(stack, after, ACROSS_ELECTIONS_MS);
  assert.is.not(await journalLeader(cluster, credentials.reader), leader, 'a new leader took over');
  await assertPaidExactlyOnce(stack, [...settledBefore, ...halfway, ...after]);
});

test.run();
