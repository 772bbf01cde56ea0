import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertNothingAcknowledgedLost, assertPaidExactlyOnce, finishAll, startTrade, step, type Tracked } from '../support/lifecycle-driver.js';
import { Stack } from '../support/stack.js';

// kill -9 in the middle of many lifecycles, restart, and check that every transition the server
// acknowledged survived, that each lifecycle can finish, and that no payout was made twice.

const WORKERS = 12;

const test = suite<{ stack: Stack; tracked: Map<string, Tracked> }>('crash recovery');

test.before(async (context) => {
  context.stack = await Stack.start();
  context.tracked = new Map();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

/** Workers start lifecycles and push them forward until the server dies under them. */
async function runUntilKilled(stack: Stack, tracked: Map<string, Tracked>, killAfterMs: number): Promise<void> {
  let alive = true;
  const worker = async () => {
    while (alive) {
      const t = await startTrade(stack);
      if (!t) return;
      tracked.set(t.id, t);
      while (alive && t.acked.state !== 'SETTLED') if (!(await step(stack, t))) return;
    }
  };
  const workers = Array.from({ length: WORKERS }, worker);
  await new Promise((r) => setTimeout(r, killAfterMs));
  await stack.kill('SIGKILL');
  alive = false;
  await Promise.all(workers);
}

test('kill -9 mid-run, restart: nothing acknowledged is lost, nothing is paid twice', async ({ stack, tracked }) => {
  await runUntilKilled(stack, tracked, 1_500);
  assert.ok(tracked.size >= WORKERS, `only ${tracked.size} lifecycles started`);
  await stack.startServer();
  await assertNothingAcknowledgedLost(stack, tracked.values());
  await finishAll(stack, tracked.values());
  await assertPaidExactlyOnce(stack, tracked.values());
});

test('kill -9 mid-run, LevelDB deleted, restart: rebuilt from the journal alone', async ({ stack, tracked }) => {
  const before = tracked.size;
  await runUntilKilled(stack, tracked, 1_500);
  assert.ok(tracked.size > before, 'the second run started lifecycles');
  rmSync(join(stack.dataDir, 'leveldb'), { recursive: true, force: true });
  await stack.startServer();
  await assertNothingAcknowledgedLost(stack, tracked.values());
  const listed = (await stack.client.list({ state: 'SETTLED', limit: 200 })).body.pacts.length;
  assert.ok(listed > 0, 'the read model is rebuilt');
  await finishAll(stack, tracked.values());
  await assertPaidExactlyOnce(stack, tracked.values());
});

test.run();
