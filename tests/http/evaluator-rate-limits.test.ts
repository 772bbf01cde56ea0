// A node's own evaluator reads the node over HTTP from 127.0.0.1; clients on that address using up the rate
// limits must not hold up its judgements (it carries the node's internal token).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { afterDispute, disputeWith } from '../support/disputes.js';
import { Stack } from '../support/stack.js';

test('the evaluator judges while clients on its address are rate limited', async () => {
  const stack = await Stack.start({ env: { PACT_RATE_LIMIT_WRITES: '20', PACT_RATE_LIMIT_LISTS: '2' } });
  try {
    const { seller, id } = await disputeWith(stack, [{ text: 'the delivery' }]);
    const hash = (await stack.client.get(id)).body.pact.proposal!.evidence.map((item) => ('blob' in item ? item.blob : '')).find(Boolean)!;
    const statuses: number[] = [];
    for (let i = 0; i < 25; i++) statuses.push((await stack.client.link(seller, id, hash)).status);
    for (let i = 0; i < 3; i++) statuses.push((await stack.client.list({ state: 'DISPUTED' })).status);
    assert.ok(statuses.includes(429), 'the clients are limited');
    await stack.client.request('POST', '/__test/evaluator', { mode: 'sandbox' });
    const pact = await afterDispute(stack, id, 10_000);
    assert.is(pact.state, 'SETTLED');
    assert.is((await stack.client.link(seller, id, hash)).status, 429, 'the clients still are');
  } finally {
    await stack.stop();
  }
});

test.run();
