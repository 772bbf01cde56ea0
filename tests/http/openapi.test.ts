import { Validator } from '@seriousme/openapi-schema-validator';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { HttpResult } from '../../client/pact-client.js';
import { ROUTE_ANSWERS } from '../../gateway/route-responses.js';
import { ERROR_STATUS, type ErrorCode } from '../../protocol/errors.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// GET /openapi.json: an OpenAPI 3.1 document, made from the route schemas, that lists every route the
// server answers (test hooks aside), and for each every status it may answer, with the error codes behind
// each error status. Answers provoked here must fit what the document says of their route.

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
  'GET /agents.md', 'GET /llms.txt', 'GET /install', 'GET /pact-cli.tgz', 'GET /openapi.json',
  'GET /machines', 'GET /machines/machines.css', 'GET /machines/live.js', 'GET /machines/pacts/{id}', 'GET /machines/pacts/{id}/journal',
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

type Schema = Record<string, unknown>;
interface DocumentedResponse {
  description: string;
  headers?: Record<string, unknown>;
  content?: Record<string, { schema: Schema }>;
}
type Operation = { responses: Record<string, DocumentedResponse> };
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: Schema;
}

async function documentOf(stack: Stack): Promise<OpenApiDocument> {
  return (await stack.client.request('GET', '/openapi.json')).body;
}

/** Every operation of the document, by `METHOD /path`. */
function operationsOf(document: OpenApiDocument): Record<string, Operation> {
  return Object.fromEntries(
    Object.entries(document.paths).flatMap(([path, methods]) => Object.entries(methods).map(([method, operation]) => [`${method.toUpperCase()} ${path}`, operation])),
  );
}

const jsonSchemaOf = (response: DocumentedResponse | undefined) => response?.content?.['application/json']?.schema;
/** The `error` codes a documented error response names. */
const codesOf = (response: DocumentedResponse | undefined) => ((jsonSchemaOf(response)?.properties as Schema | undefined)?.error as { enum?: ErrorCode[] } | undefined)?.enum ?? [];
const openApiPath = (route: string) => route.replace(/:(\w+)/g, '{$1}');
/** Routes that answer 200 whatever comes: nothing to refuse. */
const NEVER_REFUSED = ['GET /health', 'GET /', 'GET /agents.md', 'GET /llms.txt', 'GET /install', 'GET /openapi.json', 'GET /machines', 'GET /machines/machines.css', 'GET /machines/live.js'];

test('each operation documents a 2xx and its error statuses, each with the codes of that status', async ({ stack }) => {
  const operations = operationsOf(await documentOf(stack));
  for (const [route, { responses }] of Object.entries(operations)) {
    const statuses = Object.keys(responses).map(Number);
    assert.ok(statuses.some((status) => status >= 200 && status < 300), `${route} documents no 2xx`);
    const errors = statuses.filter((status) => status >= 400);
    assert.ok(errors.length > 0 || NEVER_REFUSED.includes(route), `${route} documents no error status`);
    assert.equal(statuses.filter((status) => status >= 300 && status < 400), [], `${route}: a redirect?`);
    for (const status of errors) {
      const response = responses[status]!;
      const codes = codesOf(response);
      assert.ok(codes.length > 0, `${route} ${status} names no code`);
      for (const code of codes) {
        assert.is(ERROR_STATUS[code], status, `${route}: ${code} is not a ${status}`);
        assert.match(response.description, `\`${code}\``, `${route} ${status}: the description names ${code}`);
      }
      assert.equal((jsonSchemaOf(response)?.allOf as Schema[])[0], { $ref: '#/components/schemas/Error' }, `${route} ${status}`);
      if (status === 429) assert.ok(response.headers?.['retry-after'], `${route}: 429 without Retry-After`);
    }
  }
});

test('the route table names only routes the document lists, and every error code but internal_error is documented', async ({ stack }) => {
  const operations = operationsOf(await documentOf(stack));
  for (const route of Object.keys(ROUTE_ANSWERS)) assert.ok(operations[openApiPath(route)], `${route} is in the table but not listed`);
  const documented = new Set(Object.values(operations).flatMap(({ responses }) => Object.values(responses).flatMap(codesOf)));
  // internal_error is a fault, not an answer a route gives by design: the document's description says any route may give it.
  const undocumented = Object.keys(ERROR_STATUS).filter((code) => code !== 'internal_error' && !documented.has(code as ErrorCode));
  assert.equal(undocumented, []);
});

test('spot checks: cosign 409, the 402 of fund, the pull limit, the upload content type', async ({ stack }) => {
  const operations = operationsOf(await documentOf(stack));
  const response = (route: string, status: number) => operations[route]?.responses[status];
  for (const code of ['stateNonce_mismatch', 'already_cosigned', 'invalid_state']) assert.ok(codesOf(response('POST /pacts/{id}/cosign', 409)).includes(code as ErrorCode), code);
  assert.equal(codesOf(response('POST /pacts/{id}/fund', 402)), ['payment_required', 'payment_failed']);
  assert.equal((jsonSchemaOf(response('POST /pacts/{id}/fund', 402))?.properties as Schema).requirement, { $ref: '#/components/schemas/Requirement' });
  assert.equal(codesOf(response('POST /v0/pull', 429)), ['rate_limited']);
  assert.ok(response('POST /v0/pull', 429)?.headers?.['retry-after']);
  assert.equal(codesOf(response('POST /pacts/{id}/blobs', 415)), ['unsupported_media_type']);
  assert.equal(codesOf(response('POST /v0/events', 413)), ['too_large']);
  assert.ok(codesOf(response('POST /pacts', 403)).includes('access_required'));
  assert.not.ok(response('GET /pacts/{id}', 409), 'a read has no conflict');
  assert.ok(response('GET /dl/{token}', 200)?.content?.['application/octet-stream']);
});

test('answers on the wire fit what the document says of their route', async ({ stack }) => {
  const document = await documentOf(stack);
  const operations = operationsOf(document);
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  const fits = (route: string, answer: HttpResult, status: number) => {
    assert.is(answer.status, status, `${route}: ${JSON.stringify(answer.body)}`);
    const response = operations[route]?.responses[answer.status];
    assert.ok(response, `${route} answered ${answer.status}, which it does not document: ${JSON.stringify(answer.body)}`);
    if (answer.status >= 400) assert.ok(codesOf(response).includes(answer.body.error), `${route} ${answer.status}: ${answer.body.error} is not documented`);
    const validate = ajv.compile({ ...jsonSchemaOf(response), components: document.components });
    assert.ok(validate(answer.body), `${route} ${answer.status}: ${ajv.errorsText(validate.errors)}`);
  };
  const { client } = stack;
  const { seller, buyer } = newParties();
  const created = await client.create(seller, tradeSpec(seller, buyer));
  fits('POST /pacts', created, 200);
  const id = created.body.pact.id as string;
  const post = (verb: string, call: unknown, headers?: Record<string, string>) => client.request('POST', `/pacts/${id}/${verb}`, call, headers);
  fits('POST /pacts/{id}/fund', await post('fund', client.signedCall(buyer, 'pacts.fund', id, 0, {})), 402);
  fits('POST /pacts/{id}/cosign', await post('cosign', client.signedCall(buyer, 'pacts.cosign', id, 7, {})), 409);
  fits('POST /pacts/{id}/cosign', await post('cosign', client.signedCall(buyer, 'pacts.cosign', id, 0, {})), 409);
  fits('POST /pacts/{id}/cosign', await post('cosign', client.signedCall(generateKeyPair(), 'pacts.cosign', id, 0, {})), 403);
  fits('POST /pacts/{id}/poke', await post('poke', undefined), 200);
  fits('GET /pacts/{id}', await client.get(`p_${'0'.repeat(32)}`), 404);
  fits('GET /pacts', await client.request('GET', '/pacts?limit=1000'), 400);
  fits('POST /v0/pull', await client.request('POST', '/v0/pull', { limit: 1000 }), 400);
  fits('POST /v0/events', await client.request('POST', '/v0/events', { body: 'x'.repeat(40_000) }), 413);
  fits('POST /pacts/{id}/blobs', await client.request('POST', `/pacts/${id}/blobs`, 'bytes', { 'content-type': 'text/plain' }), 415);
  fits('GET /health', await client.health(), 200);
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
