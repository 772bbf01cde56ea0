import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { assertNothingAcknowledgedLost, finishAll, startTrade, step, type Tracked } from '../support/lifecycle-driver.js';
import type { Pact } from '../../machines/pact/types.js';
import { newParties } from '../support/parties.js';
import { twoPartySpec } from '../support/pacts.js';
import { Stack } from '../support/stack.js';

// Two service processes on one NATS. The first holds every partition's lease, so the second one's
// gateway sends its commands to the first one's actors; when the first dies (kill -9), its leases
// expire and the second takes the partitions over. The trades move no money: each process has its own
// mock ledger, which a rail shared by both would not.

const FREE = { proposerBond: 0, payerDeposit: 0, payerBond: 0 };
const LEASE_EXPIRY_MS = 15_000;
const test = suite<{ first: Stack; second: Stack }>('two actor hosts');

test.before(async (context) => {
  context.first = await Stack.start();
  context.second = await Stack.start({ natsUrl: context.first.natsUrl });
});
test.after(async ({ first, second }) => {
  await second.stop();
  await first.stop();
});

const liveActors = async (stack: Stack): Promise<number> => (await stack.client.request('GET', '/health')).body.actors.live;

async function trades(stack: Stack, count: number): Promise<Tracked[]> {
  const started: Tracked[] = [];
  for (let i = 0; i < count; i++) started.push((await startTrade(stack, FREE))!);
  return started;
}

test('a write answered by the other host: a GET right after it, on the same gateway, shows it', async ({ second }) => {
  const stale: string[] = [];
  for (let i = 0; i < 40; i++) {
    const { seller, buyer } = newParties();
    const created = await second.client.create(seller, twoPartySpec(seller, buyer, {}, FREE));
    assert.is(created.status, 200, JSON.stringify(created.body));
    const id = created.body.pact.id as string;
    const read = await second.client.get(id);
    if (read.status !== 200) stale.push(`create ${i}: GET ${read.status}`);
    const funded = await second.client.fund(seller, id);
    assert.is(funded.status, 200, JSON.stringify(funded.body));
    const after = (await second.client.get(id)).body.pact as Pact | undefined;
    if (!after || after.stateNonce < (funded.body.pact as Pact).stateNonce) stale.push(`fund ${i}: GET shows nonce ${after?.stateNonce}`);
  }
  assert.is(stale.length, 0, `reads after answered writes were older than the write: ${stale.slice(0, 5).join('; ')}`);
});

test('the second host takes the partitions over when the first dies, losing nothing', async ({ first, second }) => {
  const early = await trades(second, 4); // created through the second gateway, applied by the first host
  await finishAll(second, early.slice(0, 2));
  for (const t of early.slice(2)) await step(second, t);
  assert.is(await liveActors(second), 0, 'the first host ran every actor so far');
  assert.ok((await liveActors(first)) > 0);

  await first.kill('SIGKILL');
  await assertNothingAcknowledgedLost(second, early);
  await finishAll(second, early.slice(2), LEASE_EXPIRY_MS + 15_000);
  const late = await trades(second, 2);
  await finishAll(second, late);
  assert.ok((await liveActors(second)) > 0, 'the second host runs the actors now');
});

test.run();
