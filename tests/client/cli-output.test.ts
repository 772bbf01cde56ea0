import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { answered, printable } from '../../client/cli/output.js';
import type { HttpResult } from '../../client/pact-client.js';

// How the CLI words a server's answer: a route the server lacks, a refusal, and text from a hostile server.

const result = (status: number, body: unknown, headers: Record<string, string> = {}): HttpResult => ({ status, body, headers: new Headers(headers) });
const refusalOf = (answer: HttpResult) => {
  try {
    answered(answer, 'rail address binding');
  } catch (error) {
    return error as Error & { exitCode: number; details?: unknown };
  }
  throw new Error('a refusal was taken for success');
};

test('a route this server does not have (ours, a bare fastify, or no JSON at all) is a capability it does not offer', () => {
  for (const body of [{ error: 'not_found', message: 'no route POST /rails/x402/address' }, { message: 'Route POST:/rails/x402/address not found', error: 'Not Found', statusCode: 404 }, '<html>404</html>']) {
    const refused = refusalOf(result(404, body));
    assert.is(refused.message, 'this server does not offer rail address binding');
    assert.is(refused.exitCode, 1);
  }
});

test('a refusal names its code and status, keeps its details, and says when to retry', () => {
  const missing = refusalOf(result(404, { error: 'not_found', message: 'no pact p_1' }));
  assert.is(missing.message, 'not_found (404): no pact p_1');
  const limited = refusalOf(result(429, { error: 'rate_limited', message: 'slow down', retryAfter: 5 }, { 'retry-after': '5' }));
  assert.is(limited.message, 'rate_limited (429): slow down (retry after 5 s)');
  assert.equal(limited.details, { retryAfter: 5 });
  assert.equal(answered(result(200, { ok: true }), 'x'), { ok: true });
});

test('control characters a hostile server sends are stripped before they reach a terminal', () => {
  assert.is(printable('pact: \u001b[2Jgone\u0007 (409)\n'), 'pact: [2Jgone (409)\n');
});

test.run();
