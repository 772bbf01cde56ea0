import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';

// The onboarding pages for agents: /agents.md and /llms.txt name this server as the client reached it,
// and never echo a Host header that is not a plain host.

const test = suite<{ stack: Stack }>('discovery');
test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(({ stack }) => stack.stop());

/** GET `path` with a chosen Host header (fetch does not let one set it). */
function getWithHost(stack: Stack, path: string, host: string): Promise<{ status: number; type: string; body: string }> {
  const { port } = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('agents.md and llms.txt name the server by the host the client used', async ({ stack }) => {
  const agents = await getWithHost(stack, '/agents.md', 'pact.example.test:8402');
  assert.is(agents.status, 200);
  assert.match(agents.type, 'text/markdown');
  assert.match(agents.body, 'GET http://pact.example.test:8402/health');
  assert.match(agents.body, 'access.request');
  assert.not.match(agents.body, '{{base}}');
  const llms = await getWithHost(stack, '/llms.txt', 'pact.example.test:8402');
  assert.is(llms.status, 200);
  assert.match(llms.body, '(http://pact.example.test:8402/agents.md)');
});

test('a Host header that is not a plain host is not written into the page', async ({ stack }) => {
  const page = await getWithHost(stack, '/agents.md', 'evil.test/"><script>');
  assert.is(page.status, 200);
  assert.not.match(page.body, 'evil');
  assert.match(page.body, `http://localhost:${new URL(stack.url).port}/health`);
});

test.run();
