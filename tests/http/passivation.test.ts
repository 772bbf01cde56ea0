import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// Memory stays bounded with many pacts: past PACT_MAX_ACTORS live actors the idle ones are snapshotted
// and dropped, and a dropped pact comes back (snapshot + journal tail) on its next command.

const MAX_ACTORS = 4;
const test = suite<{ stack: Stack }>('passivation');

test.before(async (context) => {
  context.stack = await Stack.start({ env: { PACT_MAX_ACTORS: String(MAX_ACTORS) } });
});
test.after(async ({ stack }) => {
  await stack.stop();
});

test('live actors stay bounded and passivated pacts come back on their next command', async ({ stack }) => {
  const pacts = [];
  for (let i = 0; i < 12; i++) {
    const { seller, buyer } = newParties();
    const id = (await stack.client.create(seller, tradeSpec(seller, buyer))).body.pact.id as string;
    assert.is((await stack.client.fund(seller, id)).status, 200);
    pacts.push({ seller, buyer, id });
  }
  const live = (await stack.client.request('GET', '/health')).body.actors.live;
  assert.ok(live <= MAX_ACTORS, `${live} live actors`);
  for (const { buyer, id } of pacts) {
    const funded = await stack.client.fund(buyer, id);
    assert.is(funded.status, 200, JSON.stringify(funded.body));
    assert.is(funded.body.pact.state, 'ACTIVE');
    assert.is(funded.body.pact.stateNonce, 2);
  }
  assert.ok((await stack.client.request('GET', '/health')).body.actors.live <= MAX_ACTORS);
});

test('health times the activations of pacts that come back from their record, and no create', async ({ stack }) => {
  const activations = async () => (await stack.client.request('GET', '/health')).body.actors.activations;
  const before = await activations();
  const pacts = [];
  for (let i = 0; i < MAX_ACTORS + 2; i++) {
    const { seller, buyer } = newParties();
    pacts.push({ seller, id: (await stack.client.create(seller, tradeSpec(seller, buyer))).body.pact.id as string });
  }
  assert.is((await activations()).count, before.count, 'a create loads no record');
  for (const { seller, id } of pacts) assert.is((await stack.client.fund(seller, id)).status, 200);
  const after = await activations();
  assert.ok(after.count >= before.count + 2, `${after.count - before.count} of the passivated pacts came back`);
  assert.type(after.p50Ms, 'number');
  assert.ok(after.p50Ms <= after.p99Ms);
});

test.run();
