import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact, PactState } from '../../machines/pact/types.js';
import type { KeyPair } from '../../protocol/sign.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// kill -9 in the middle of many lifecycles, restart, and check that every transition the server
// acknowledged survived, that each lifecycle can finish, and that no payout was made twice.

const WORKERS = 12;
const ORDER: PactState[] = ['CREATED', 'ACTIVE', 'PROPOSED', 'SETTLED'];

interface Tracked {
  seller: KeyPair;
  buyer: KeyPair;
  id: string;
  acked: { nonce: number; state: PactState };
}

const test = suite<{ stack: Stack; tracked: Map<string, Tracked> }>('crash recovery');

test.before(async (context) => {
  context.stack = await Stack.start();
  context.tracked = new Map();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

/** Runs the next step of a lifecycle; resolves false once the server is gone. */
async function step(stack: Stack, t: Tracked): Promise<boolean> {
  const c = stack.client;
  const distribution = [{ party: t.seller.party, bp: 6000 }, { party: t.buyer.party, bp: 4000 }];
  try {
    const pact = (await c.get(t.id)).body.pact as Pact;
    record(t, pact); // a read shows only journaled state, so it must survive a crash too
    if (pact.state === 'SETTLED') return true;
    const result =
      pact.state === 'CREATED'
        ? await c.fund(pact.parties[0]!.confirmed ? t.buyer : t.seller, t.id)
        : pact.state === 'ACTIVE'
          ? await c.propose(t.seller, t.id, { evidence: [{ note: 'done' }], distribution })
          : await c.cosign(t.buyer, t.id);
    if (result.status === 200) record(t, result.body.pact);
    return true;
  } catch {
    return false;
  }
}

function record(t: Tracked, pact: Pact): void {
  if (pact.stateNonce > t.acked.nonce) t.acked = { nonce: pact.stateNonce, state: pact.state };
}

/** Workers start lifecycles and push them forward until the server dies under them. */
async function runUntilKilled(stack: Stack, tracked: Map<string, Tracked>, killAfterMs: number): Promise<void> {
  let alive = true;
  const worker = async () => {
    while (alive) {
      const { seller, buyer } = newParties();
      let created;
      try {
        created = await stack.client.create(seller, tradeSpec(seller, buyer));
      } catch {
        return;
      }
      if (created.status !== 200) continue;
      const t: Tracked = { seller, buyer, id: created.body.pact.id, acked: { nonce: 0, state: 'CREATED' } };
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

async function assertNothingAcknowledgedLost(stack: Stack, tracked: Map<string, Tracked>): Promise<void> {
  for (const t of tracked.values()) {
    const { status, body } = await stack.client.get(t.id);
    assert.is(status, 200, `pact ${t.id} is gone`);
    const pact = body.pact as Pact;
    assert.ok(pact.stateNonce >= t.acked.nonce, `${t.id}: nonce ${pact.stateNonce} < acknowledged ${t.acked.nonce}`);
    assert.ok(ORDER.indexOf(pact.state) >= ORDER.indexOf(t.acked.state), `${t.id}: ${pact.state} is before ${t.acked.state}`);
  }
}

async function finishAll(stack: Stack, tracked: Map<string, Tracked>): Promise<void> {
  for (const t of tracked.values()) {
    for (let i = 0; i < 6 && t.acked.state !== 'SETTLED'; i++) await step(stack, t);
    assert.is(t.acked.state, 'SETTLED', `${t.id} could not finish`);
  }
}

async function assertPaidExactlyOnce(stack: Stack, tracked: Map<string, Tracked>): Promise<void> {
  await stack.payoutsIdle(30_000);
  const ledger = await stack.ledger();
  const paidByKey = new Map<string, number>();
  for (const op of ledger.operations) if (op.kind === 'payout') paidByKey.set(op.key, (paidByKey.get(op.key) ?? 0) + 1);
  for (const t of tracked.values()) {
    const pact = (await stack.client.get(t.id)).body.pact as Pact;
    assert.ok(pact.payouts.every((p) => p.status === 'paid'), `${t.id} has unpaid payouts`);
    const paidOut = pact.payouts.reduce((sum, p) => sum + BigInt(p.amount), 0n);
    assert.is(paidOut, 1001n + 50n + 75n, `${t.id} paid out ${paidOut}`);
    for (const payout of pact.payouts) assert.is(paidByKey.get(payout.key), 1, `${payout.key} paid ${paidByKey.get(payout.key)} times`);
  }
  const collected = ledger.operations.filter((op) => op.kind === 'collect').reduce((s, op) => s + BigInt(op.amount), 0n);
  const paid = ledger.operations.filter((op) => op.kind === 'payout').reduce((s, op) => s + BigInt(op.amount), 0n);
  assert.is(collected, paid, 'escrow keeps nothing once every pact settled');
}

test('kill -9 mid-run, restart: nothing acknowledged is lost, nothing is paid twice', async ({ stack, tracked }) => {
  await runUntilKilled(stack, tracked, 1_500);
  assert.ok(tracked.size >= WORKERS, `only ${tracked.size} lifecycles started`);
  await stack.startServer();
  await assertNothingAcknowledgedLost(stack, tracked);
  await finishAll(stack, tracked);
  await assertPaidExactlyOnce(stack, tracked);
});

test('kill -9 mid-run, LevelDB deleted, restart: rebuilt from the journal alone', async ({ stack, tracked }) => {
  const before = tracked.size;
  await runUntilKilled(stack, tracked, 1_500);
  assert.ok(tracked.size > before, 'the second run started lifecycles');
  rmSync(join(stack.dataDir, 'leveldb'), { recursive: true, force: true });
  await stack.startServer();
  await assertNothingAcknowledgedLost(stack, tracked);
  const listed = (await stack.client.list({ state: 'SETTLED', limit: 200 })).body.pacts.length;
  assert.ok(listed > 0, 'the read model is rebuilt');
  await finishAll(stack, tracked);
  await assertPaidExactlyOnce(stack, tracked);
});

test.run();
