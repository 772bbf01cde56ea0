import { Validator } from '@seriousme/openapi-schema-validator';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';

// GET /openapi.json: an OpenAPI 3.1 document, made from the route schemas, that lists every route the
// server answers (test hooks aside).

const test = suite<{ stack: Stack }>('openapi');
test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(({ stack }) => stack.stop());

const ROUTES = [
  'GET /', 'GET /health', 'POST /pacts', 'GET /pacts', 'GET /pacts/{id}', 'POST /pacts/{id}/fund', 'POST /pacts/{id}/withdraw',
  'POST /pacts/{id}/propose', 'POST /pacts/{id}/cosign', 'POST /pacts/{id}/object', 'POST /pacts/{id}/cancel',
  'POST /pacts/{id}/verdict', 'POST /pacts/{id}/poke', 'POST /pacts/{id}/blobs', 'POST /pacts/{id}/blobs/{hash}/link',
  'GET /dl/{token}', 'POST /offers', 'GET /offers', 'GET /offers/watch', 'POST /offers/{id}/accept', 'POST /v0/events',
  'POST /v0/pull', 'POST /access/request', 'POST /access/verify', 'GET /access/{party}', 'POST /access/admin',
];

test('valid OpenAPI 3.1, listing every route and no test hook', async ({ stack }) => {
  const { status, body } = await stack.client.request('GET', '/openapi.json');
  assert.is(status, 200);
  assert.is(body.openapi, '3.1.0');
  const result = await new Validator().validate(body);
  assert.ok(result.valid, String(JSON.stringify(result.errors)).slice(0, 2_000));
  const listed = Object.entries(body.paths as Record<string, Record<string, unknown>>).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
  );
  for (const route of ROUTES) assert.ok(listed.includes(route), `${route} is not listed`);
  assert.not.ok(listed.some((route) => route.includes('/__test') || route.includes('/reference')), 'test hooks and the reference page are not listed');
});

test('GET /reference: a browsable page whose scripts come from this server', async ({ stack }) => {
  const page = await fetch(`${stack.url}/reference/`);
  assert.is(page.status, 200);
  assert.match(page.headers.get('content-type') ?? '', 'text/html');
  const html = await page.text();
  const scripts = [...html.matchAll(/src="([^"]+)"/g)].map((m) => m[1]!);
  assert.ok(scripts.length > 0);
  for (const src of scripts) {
    assert.not.ok(/^https?:/.test(src), `${src} is not served here`);
    const script = await fetch(new URL(src, `${stack.url}/reference/`));
    assert.is(script.status, 200, src);
  }
  const initializer = await (await fetch(`${stack.url}/reference/static/swagger-initializer.js`)).text();
  assert.match(initializer, 'json', 'the page loads this server\'s document');
});

test.run();
