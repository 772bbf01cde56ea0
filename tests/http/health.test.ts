import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';
import { disputedPact } from '../support/trades.js';

// GET /health answers at once from kept figures, and says ok: false with the reason while NATS is away.

const test = suite<{ stack: Stack }>('health');

test.before(async (context) => {
  context.stack = await Stack.start({ env: { PACT_COMMAND_TIMEOUT_MS: '2000' } });
});
test.after(async ({ stack }) => {
  await stack.stop();
});

async function timedHealth(stack: Stack): Promise<{ ms: number; status: number; body: any }> {
  const started = Date.now();
  const { status, body } = await stack.client.request('GET', '/health');
  return { ms: Date.now() - started, status, body };
}

test('disputes are counted from kept figures', async ({ stack }) => {
  const before = (await timedHealth(stack)).body.pending.disputes;
  await disputedPact(stack);
  const after = await timedHealth(stack);
  assert.is(after.body.ok, true);
  assert.is(after.body.pending.disputes, before + 1);
});

test('while NATS is away, health answers at once with ok: false and says why; then ok again', async ({ stack }) => {
  await stack.natsOutage(async () => {
    const { seller, buyer } = newParties();
    const created = await stack.client.create(seller, tradeSpec(seller, buyer));
    assert.is(created.status, 503, 'a write while NATS is away is 503, never 500');
    assert.match(stack.serverLog(), '503 unavailable POST /pacts', 'and every 5xx is logged');
    const away = await timedHealth(stack);
    assert.is(away.status, 200);
    assert.is(away.body.ok, false);
    assert.match(away.body.problems.join(' '), /NATS/);
    assert.ok(away.ms < 2_000, `answered in ${away.ms} ms`);
  });
  const deadline = Date.now() + 20_000;
  let back = await timedHealth(stack);
  while (!back.body.ok && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 200));
    back = await timedHealth(stack);
  }
  assert.is(back.body.ok, true, 'ok again once NATS is back');
  assert.is((await disputedPact(stack)).id.length > 0, true, 'and writes work again');
});

test.run();
