import type { AddressInfo } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { serverWithCachedPactReads } from '../../gateway/cached-pact-reads.js';

// Which requests the server answers from the read model's memory, and which it hands to Fastify.

const ID = `p_${'ab'.repeat(16)}`;
const BODY = '{"pact":{"id":"…"}}';
const LIMITS = { connectionTimeoutMs: 1_000, requestTimeoutMs: 1_000, keepAliveTimeoutMs: 1_000, maxConnections: 10 };

async function withServer(use: (url: string) => Promise<void>): Promise<void> {
  // Any id is "in memory" but those starting p_cd: what the path check lets through is answered here.
  const cached = (id: string) => (id.startsWith('p_cd') ? undefined : BODY);
  const server = serverWithCachedPactReads(LIMITS, cached)((_request, response) => response.setHeader('x-answered-by', 'fastify').end());
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  try {
    await use(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  } finally {
    server.closeAllConnections();
    await new Promise((closed) => server.close(closed));
  }
}

test('a GET of a pact in memory is answered with its body, its length in bytes and the JSON type', () =>
  withServer(async (url) => {
    const response = await fetch(`${url}/pacts/${ID}`);
    assert.is(response.status, 200);
    assert.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.is(response.headers.get('content-length'), String(Buffer.byteLength(BODY)));
    assert.is(await response.text(), BODY);
  }));

test('anything else goes to Fastify: another method, a query, an escape, a pact not in memory, another route', () =>
  withServer(async (url) => {
    const elsewhere = [
      fetch(`${url}/pacts/${ID}`, { method: 'HEAD' }),
      fetch(`${url}/pacts/${ID}`, { method: 'POST' }),
      fetch(`${url}/pacts/${ID}?x=1`),
      fetch(`${url}/pacts/${ID.slice(0, -1)}%62`),
      fetch(`${url}/pacts/${ID.replace('ab', 'AB')}`),
      fetch(`${url}/pacts/p_${'cd'.repeat(16)}`),
      fetch(`${url}/offers/${ID}`),
      fetch(`${url}/pacts/${ID}/x`),
    ];
    const answeredBy = (await Promise.all(elsewhere)).map((response) => response.headers.get('x-answered-by'));
    assert.equal(answeredBy, Array(elsewhere.length).fill('fastify'));
  }));

test('the server keeps the connection limits Fastify would have set', () => {
  const server = serverWithCachedPactReads(LIMITS, () => undefined)(() => undefined);
  assert.is(server.keepAliveTimeout, LIMITS.keepAliveTimeoutMs);
  assert.is(server.requestTimeout, LIMITS.requestTimeoutMs);
  assert.is(server.timeout, LIMITS.connectionTimeoutMs);
});

test.run();
