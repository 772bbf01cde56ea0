import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';

// Without PACT_TEST_HOOKS=1 the test routes do not exist, and /health tells a client what it must
// compare before funding (DECISIONS.md, Health and test hooks).

const test = suite<{ stack: Stack }>('without test hooks');

test.before(async (context) => {
  context.stack = await Stack.start({ env: { PACT_TEST_HOOKS: '0' } });
});
test.after(async ({ stack }) => {
  await stack.stop();
});

test('the test routes are not mounted', async ({ stack }) => {
  for (const [method, path] of [['POST', '/__test/clock'], ['POST', '/__test/rails/mock'], ['GET', '/__test/rails/mock']] as const) {
    const response = await stack.client.request(method, path, method === 'POST' ? { advanceMs: 1 } : undefined);
    assert.is(response.status, 404, `${method} ${path}`);
    assert.is(response.body.error, 'not_found');
  }
});

test('health names the pinned evaluator policy, the fee recipient and the rails', async ({ stack }) => {
  const { status, body } = await stack.client.request('GET', '/health');
  assert.is(status, 200);
  assert.is(body.ok, true);
  assert.equal(body.evaluator, { pubkey: stack.evaluator.party, promptVersion: 'pact-eval-1', model: 'sandbox', timeoutMs: 86_400_000, onFailure: 'refund' });
  assert.is(body.arbitrationFeeRecipient, body.serverParty);
  assert.equal(body.rails, ['mock', 'credit']);
  assert.equal(body.paymentRails.mock, { live: true, solvency: { ok: true }, payoutsReady: true });
  assert.equal(body.paymentRails.credit, { live: true, solvency: { ok: true, heldOn: 'payer wallets' }, payoutsReady: true, feeWalletBound: true });
  assert.equal(body.payoutReadiness, { treasury: { mock: true, credit: true } });
  assert.equal(body.access, { mode: 'open' });
  assert.equal(Object.keys(body.pending).sort(), ['deadlines', 'disputes', 'payouts', 'payoutsCheckedAt']);
  assert.type(body.time, 'number');
});

test.run();
