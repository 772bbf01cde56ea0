import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { activePact, buyerFundedPact } from '../support/trades.js';
import { Stack } from '../support/stack.js';

// GET /pacts/:id answers the same whether the pact's body is in memory (answered before Fastify routes,
// gateway/cached-pact-reads.ts) or read from disk through the route, and never an old body.

const test = suite<{ stack: Stack }>('pact reads');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

/** Status, headers but the date, and body of a request. */
async function answer(url: string, init?: RequestInit) {
  const response = await fetch(url, init);
  const headers = Object.fromEntries([...response.headers].filter(([name]) => name !== 'date'));
  return { status: response.status, headers, body: await response.text() };
}

test('a read from memory answers what the first read, from disk, answered', async ({ stack }) => {
  const { id } = await buyerFundedPact(stack);
  const url = `${stack.url}/pacts/${id}`;
  const fromDisk = await answer(url);
  assert.is(fromDisk.status, 200);
  assert.equal(JSON.parse(fromDisk.body).pact.id, id);
  assert.equal(await answer(url), fromDisk, 'the second read is answered from memory, byte for byte the same');
  assert.equal(await answer(`${url}?fields=all`), fromDisk, 'a query goes through the route: the same answer');
  const head = await answer(url, { method: 'HEAD' });
  const typeAndLength = ({ headers }: typeof head) => [headers['content-type'], headers['content-length']];
  assert.equal([head.status, ...typeAndLength(head)], [200, ...typeAndLength(fromDisk)], 'HEAD: the same type and length');
});

test('a body with characters past ASCII: the same bytes and length in UTF-8 from disk and from memory', async ({ stack }) => {
  const { seller, id } = await activePact(stack);
  const note = 'résumé, 900 € — 完成 🎉';
  const proposed = await stack.client.propose(seller, id, { evidence: [{ note }], distribution: [{ party: seller.party, bp: 10000 }] });
  assert.is(proposed.status, 200, JSON.stringify(proposed.body));
  const url = `${stack.url}/pacts/${id}`;
  const fromDisk = await answer(url); // not read before: answered by the route
  assert.ok(fromDisk.body.includes(note));
  assert.is(fromDisk.headers['content-length'], String(Buffer.byteLength(fromDisk.body)));
  assert.equal(await answer(url), fromDisk, 'from memory, byte for byte the same');
});

test('a write replaces the body in memory before it is answered', async ({ stack }) => {
  const { seller, id } = await buyerFundedPact(stack);
  const url = `${stack.url}/pacts/${id}`;
  await answer(url);
  assert.is(JSON.parse((await answer(url)).body).pact.state, 'CREATED');
  assert.is((await stack.client.fund(seller, id)).body.pact.state, 'ACTIVE');
  assert.is(JSON.parse((await answer(url)).body).pact.state, 'ACTIVE');
});

test('a pact that does not exist is 404 not_found, as from the route', async ({ stack }) => {
  const missing = await answer(`${stack.url}/pacts/p_${'0'.repeat(32)}`);
  assert.is(missing.status, 404);
  assert.is(JSON.parse(missing.body).error, 'not_found');
});

test.run();
