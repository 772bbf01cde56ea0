import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPair, signed, type KeyPair } from '../../protocol/sign.js';
import { Stack } from '../support/stack.js';

// POST /rails/:rail/address (escrow-service.md, Rail addresses): a party's payout address per rail, first write
// wins across nodes; the same address again is 200, another 409; bad calls change nothing.

const test = suite<{ first: Stack; second: Stack }>('rail addresses');
test.before(async (context) => {
  context.first = await Stack.start();
  context.second = await Stack.start({ natsUrl: context.first.natsUrl });
});
test.after(async ({ first, second }) => {
  await second?.stop();
  await first?.stop();
});

const bind = (stack: Stack, key: KeyPair, rail: string, address: string, change: (call: Record<string, any>) => void = () => {}) => {
  const envelope: Record<string, any> = { action: 'rails.bindAddress', call: { address }, pactId: '', stateNonce: 0, issuedAt: Date.now(), signer: key.party };
  change(envelope);
  return stack.client.request('POST', `/rails/${rail}/address`, signed(envelope, key));
};

test('the first address binds; the same again is 200; another is 409 with the bound one', async ({ first }) => {
  const key = generateKeyPair();
  const bound = await bind(first, key, 'mock', 'payouts-1');
  assert.is(bound.status, 200, JSON.stringify(bound.body));
  assert.equal({ ...bound.body, boundAt: 0 }, { rail: 'mock', party: key.party, address: 'payouts-1', boundAt: 0 });
  const again = await bind(first, key, 'mock', 'payouts-1', (e) => (e.issuedAt += 1));
  assert.is(again.status, 200);
  assert.is(again.body.boundAt, bound.body.boundAt, 'the first binding stands');
  const other = await bind(first, key, 'mock', 'payouts-2');
  assert.is(other.status, 409);
  assert.equal({ error: other.body.error, address: other.body.address }, { error: 'address_already_bound', address: 'payouts-1' });
  assert.is((await bind(first, key, 'mock', 'payouts-1', (e) => (e.call.rail = 'mock'))).status, 200, 'call.rail may name the rail');
});

test('two nodes binding different addresses at once: exactly one wins, and both then agree', async ({ first, second }) => {
  for (let round = 0; round < 5; round++) {
    const key = generateKeyPair();
    const answers = await Promise.all([bind(first, key, 'mock', 'from-first'), bind(second, key, 'mock', 'from-second')]);
    const statuses = answers.map((a) => a.status).sort();
    assert.equal(statuses, [200, 409], JSON.stringify(answers.map((a) => a.body)));
    const winner = answers.find((a) => a.status === 200)!.body.address;
    for (const stack of [first, second]) assert.is((await bind(stack, key, 'mock', winner)).status, 200);
  }
});

test('refusals: signature, scope, rail, address, nonce, freshness; none binds anything', async ({ first }) => {
  const key = generateKeyPair();
  const refusals: [number, string, Promise<{ status: number; body: any }>][] = [
    [401, 'invalid_signature', first.client.request('POST', '/rails/mock/address', { ...signed({ action: 'rails.bindAddress', call: { address: 'a' }, pactId: '', stateNonce: 0, issuedAt: Date.now(), signer: key.party }, key), call: { address: 'b' } })],
    [401, 'invalid_signature', bind(first, key, 'mock', 'a', (e) => (e.action = 'access.request'))],
    [401, 'invalid_signature', bind(first, key, 'mock', 'a', (e) => (e.call.rail = 'x402'))],
    [400, 'rail_not_available', bind(first, key, 'x402', '0x0000000000000000000000000000000000000001')],
    [400, 'invalid_request', bind(first, key, 'mock', 'has space')],
    [400, 'invalid_request', bind(first, key, 'mock', 'a'.repeat(129))],
    [400, 'invalid_request', bind(first, key, 'mock', 'a', (e) => (e.stateNonce = 1))],
    [422, 'stale_issuedAt', bind(first, key, 'mock', 'a', (e) => (e.issuedAt = Date.now() - 11 * 60_000))],
  ];
  for (const [status, code, answer] of refusals) {
    const { status: got, body } = await answer;
    assert.is(got, status, `${code}: ${JSON.stringify(body)}`);
    assert.is(body.error, code);
  }
  assert.is((await bind(first, key, 'mock', 'finally')).status, 200, 'nothing was bound by a refused call');
});

test.run();
