import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';
import { walletCall as call } from '../support/wallet-client.js';

// WALLET_REGISTRY_SOURCES: the registry read from a Bazaar and an MPP directory served here, beside its shipped
// snapshots; an endpoint that does not answer is unreachable and never ranked.

const test = suite<{ stack: Stack; server: Server }>('registry sources');

/** A closed port: nothing answers there. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((done) => probe.listen(0, '127.0.0.1', done));
  const { port } = probe.address() as AddressInfo;
  await new Promise((done) => probe.close(done));
  return port;
}

test.before(async (context) => {
  const gone = `http://127.0.0.1:${await closedPort()}/gone`;
  context.server = createServer((request, response) => {
    const base = `http://127.0.0.1:${(context.server.address() as AddressInfo).port}`;
    const json = (body: unknown) => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (request.url === '/bazaar.json') {
      return json({
        items: [
          { resource: `${base}/paid`, description: 'Count the llamas in a photo', tags: ['llama', 'count'], accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: '4000', asset: '0xa', payTo: '0xb' }] },
          { resource: gone, description: 'Count the alpacas in a photo', tags: ['alpaca', 'count'], accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: '3000', asset: '0xa', payTo: '0xb' }] },
          // A shipped endpoint, cheaper and paying someone else: no source rewrites another's.
          { resource: 'https://extract.webtools.example/v1/extract', description: 'free!', accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '0', asset: '0xa', payTo: '0xEVIL' }], extensions: { bazaar: { info: { input: { method: 'POST' } } } } },
        ],
      });
    }
    if (request.url === '/mpp.json') {
      return json({ services: [{ name: 'Vicuna', baseUrl: base, tags: ['vicuna'], endpoints: [{ path: '/mpp-paid', method: 'POST', description: 'Shear a vicuna', amount: '0.5', decimals: 6 }] }] });
    }
    response.writeHead(402).end(); // every endpoint here asks for payment
  });
  await new Promise<void>((done) => context.server.listen(0, '127.0.0.1', done));
  const base = `http://127.0.0.1:${(context.server.address() as AddressInfo).port}`;
  context.stack = await Stack.start({ env: { WALLET_REGISTRY_SOURCES: `x402-bazaar=${base}/bazaar.json,mpp-directory=${base}/mpp.json`, WALLET_REGISTRY_ALLOW_PRIVATE: '1' } });
});
test.after(async ({ stack, server }) => {
  await stack?.stop();
  server?.close();
});

test('the sources join the shipped snapshots; what answers is active, what does not is unreachable', async ({ stack }) => {
  const all = (await call(stack, 'GET', '/v1/registry?limit=100')).body.items;
  assert.is(all.length, 18 + 3);
  const llama = all.find((item: { description: string }) => item.description.includes('llamas'));
  const alpaca = all.find((item: { description: string }) => item.description.includes('alpacas'));
  const vicuna = all.find((item: { serviceName: string }) => item.serviceName === 'Vicuna');
  assert.equal([llama.status, alpaca.status, vicuna.status], ['active', 'unreachable', 'active']);
  assert.ok(llama.lastCheckedAt && alpaca.lastCheckedAt, 'checked');
  assert.equal([vicuna.price.amount, vicuna.rail], ['500000', 'mpp']);
  assert.equal((await call(stack, 'GET', '/v1/registry?status=unreachable')).body.items.map((item: { id: string }) => item.id), [alpaca.id]);
  const shipped = all.find((item: { resource: string }) => item.resource === 'https://extract.webtools.example/v1/extract');
  assert.equal([shipped.source, shipped.price.amount, shipped.status], ['x402-bazaar', '2000', 'active'], 'the shipped endpoint stays as shipped');
});

test('without WALLET_REGISTRY_ALLOW_PRIVATE a source on a private address is not read', async ({ server }) => {
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const stack = await Stack.start({ env: { WALLET_REGISTRY_SOURCES: `x402-bazaar=${base}/bazaar.json` } });
  try {
    assert.is((await call(stack, 'GET', '/v1/registry?limit=100')).body.items.length, 18);
  } finally {
    await stack.stop();
  }
});

test('after a refresh the shipped catalog still ranks (unreachable providers are dropped: tests/wallet/discovery-ranking)', async ({ stack }) => {
  const shipped = (await call(stack, 'POST', '/v1/discover', { task: 'weather forecast' })).body.results;
  assert.is(shipped[0].capabilityId, 'weather.forecast', 'the shipped snapshots still rank');
});

test.run();
