import { request } from 'node:http';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';

// The onboarding pages: the landing page, /agents.md and /llms.txt name this server as the client reached
// it, and never echo a Host header that is not a plain host. (tests/browser/pages.test.ts renders `/`.)

const test = suite<{ stack: Stack }>('discovery');
test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(({ stack }) => stack.stop());

/** GET `path` with a chosen Host header (fetch does not let one set it). */
function getWithHost(stack: Stack, path: string, host: string): Promise<{ status: number; type: string; csp: string; body: string }> {
  const { port } = new URL(stack.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { host } }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), csp: String(res.headers['content-security-policy']), body }));
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
  assert.match(llms.body, '`curl -fsSL http://pact.example.test:8402/install | sh`');
  assert.match(agents.body, 'pact init --server http://pact.example.test:8402');
});

test('the landing page is HTML under a policy that runs no script, with the install command for this host', async ({ stack }) => {
  const page = await getWithHost(stack, '/', 'pact.example.test:8402');
  assert.is(page.status, 200);
  assert.is(page.type, 'text/html; charset=utf-8');
  assert.match(page.csp, "default-src 'none'");
  assert.not.match(page.csp, 'script-src');
  assert.match(page.body, '<code id="install-command">curl -fsSL http://pact.example.test:8402/install | sh</code>');
  assert.not.match(page.body, '{{');
});

test('a Host header that is not a plain host is not written into the page', async ({ stack }) => {
  const ownHealth = `http://localhost:${new URL(stack.url).port}/health`;
  const agents = await getWithHost(stack, '/agents.md', 'evil.test/"><script>');
  assert.is(agents.status, 200);
  assert.not.match(agents.body, 'evil');
  assert.match(agents.body, ownHealth);
  const landing = await getWithHost(stack, '/', 'evil.test/"><script>');
  assert.not.match(landing.body, 'evil');
  assert.match(landing.body, `curl -fsSL http://localhost:${new URL(stack.url).port}/install | sh`);
});

test.run();
