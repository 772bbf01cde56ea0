import Fastify, { type FastifyInstance } from 'fastify';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { answerCachedPactReads } from '../../gateway/cached-pact-reads.js';

// Which requests a Fastify app answers from the read model's memory, before its routes, and which reach them.

const ID = `p_${'ab'.repeat(16)}`;
const BODY = '{"pact":{"id":"…"}}';
// Any id is "in memory" but those starting p_cd: what the path check lets through is answered from memory.
const cached = (id: string) => (id.startsWith('p_cd') ? undefined : Buffer.from(BODY));

/** An app whose every routed request is counted and marked, with the reads from memory in front. */
async function withApp(use: (url: string, routed: () => number) => Promise<void>, setUp = (_app: FastifyInstance) => {}): Promise<void> {
  const app = Fastify();
  answerCachedPactReads(app, cached);
  setUp(app);
  let routed = 0;
  app.addHook('onRequest', async (_request, reply) => {
    routed++;
    reply.header('x-answered-by', 'fastify');
  });
  app.get('/pacts/:id', async () => 'route');
  app.post('/pacts/:id', async () => 'route');
  await app.listen({ host: '127.0.0.1', port: 0 });
  try {
    await use(urlOf(app), () => routed);
  } finally {
    await app.close();
  }
}

const urlOf = (app: FastifyInstance) => `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;

test('a GET of a pact in memory never reaches Fastify: its body, its length in bytes, the JSON type', () =>
  withApp(async (url, routed) => {
    const response = await fetch(`${url}/pacts/${ID}`);
    assert.is(response.status, 200);
    assert.is(response.headers.get('content-type'), 'application/json; charset=utf-8');
    assert.is(response.headers.get('content-length'), String(Buffer.byteLength(BODY)));
    assert.is(response.headers.get('x-answered-by'), null);
    assert.is(await response.text(), BODY);
    assert.is(routed(), 0);
  }));

test('anything else reaches Fastify: another method, a query, an escape, upper case, a pact not in memory, another path', () =>
  withApp(async (url, routed) => {
    const elsewhere = [
      fetch(`${url}/pacts/${ID}`, { method: 'HEAD' }),
      fetch(`${url}/pacts/${ID}`, { method: 'POST' }),
      fetch(`${url}/pacts/${ID}?x=1`),
      fetch(`${url}/pacts/${ID.slice(0, -1)}%62`),
      fetch(`${url}/pacts/${ID.replace('ab', 'AB')}`),
      fetch(`${url}/pacts/p_${'cd'.repeat(16)}`),
      fetch(`${url}/offers/${ID}`),
      fetch(`${url}/pacts/${ID}/`),
    ];
    const answeredBy = (await Promise.all(elsewhere)).map((response) => response.headers.get('x-answered-by'));
    assert.equal(answeredBy, Array(elsewhere.length).fill('fastify'));
    assert.is(routed(), elsewhere.length);
  }));

test('once the app is closing, a read reaches Fastify, which answers 503', async () => {
  let duringClose: number | undefined;
  const readWhileClosing = (app: FastifyInstance) =>
    app.addHook('preClose', async () => {
      duringClose = (await fetch(`${urlOf(app)}/pacts/${ID}`)).status;
    });
  await withApp(async () => {}, readWhileClosing);
  assert.is(duringClose, 503);
});

test('the app must still have the request listener Fastify gave its server', () => {
  const app = Fastify();
  app.server.on('request', () => undefined);
  assert.throws(() => answerCachedPactReads(app, cached), /one request listener/);
});

test.run();
