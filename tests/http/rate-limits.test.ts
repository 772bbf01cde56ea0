import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact } from '../../machines/pact/types.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// Per-IP limits on writes, pokes and list reads: past them a client gets 429 rate_limited with Retry-After,
// and nothing changes.

const test = suite<{ stack: Stack }>('rate limits');

test.before(async (context) => {
  context.stack = await Stack.start({ env: { PACT_RATE_LIMIT_WRITES: '3', PACT_RATE_LIMIT_POKES: '2', PACT_RATE_LIMIT_LISTS: '2', PACT_RATE_LIMIT_PULLS: '10' } });
});
test.after(async ({ stack }) => {
  await stack.stop();
});

test('writes past the limit are 429 with Retry-After and change nothing', async ({ stack }) => {
  const statuses: number[] = [];
  let limited;
  for (let i = 0; i < 5; i++) {
    const { seller, buyer } = newParties();
    const response = await stack.client.create(seller, tradeSpec(seller, buyer));
    statuses.push(response.status);
    if (response.status === 429) limited = response;
  }
  assert.equal(statuses, [200, 200, 200, 429, 429]);
  assert.is((limited!.body as any).error, 'rate_limited');
  assert.ok(Number(limited!.headers.get('retry-after')) > 0, 'Retry-After says when');
  assert.is((await stack.client.request('GET', '/health')).body.pending.deadlines, 3, 'the refused creates made no pact');
});

test('pokes and list reads have their own limits; reading one pact has none', async ({ stack }) => {
  const listed = await stack.client.list({});
  const id = (listed.body.pacts[0] as Pick<Pact, 'id'>).id;
  assert.equal([(await stack.client.poke(id)).status, (await stack.client.poke(id)).status, (await stack.client.poke(id)).status], [200, 200, 429]);
  assert.equal([(await stack.client.list({})).status, (await stack.client.list({})).status], [200, 429]);
  for (let i = 0; i < 5; i++) assert.is((await stack.client.get(id)).status, 200);
});

test('pulls draw on a token bucket per address; a long poll costs more', async ({ stack }) => {
  // 10 tokens a minute: an immediate pull costs 1, one that may wait 1 s costs 2, one that may wait 30 s 7.
  // Each starts at the earliest event (the notifications of the pacts above), so none waits.
  const pull = (waitSeconds: number) => stack.client.pull({ start: 'earliest', waitSeconds });
  assert.equal([(await pull(0)).status, (await pull(1)).status, (await pull(30)).status], [200, 200, 200]);
  const over = await pull(0);
  assert.is(over.status, 429);
  assert.is((over.body as any).error, 'rate_limited');
  assert.ok(Number(over.headers.get('retry-after')) > 0);
});

test.run();
