import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPair } from '../../protocol/sign.js';
import { closeBrowser, textOf, visit } from '../support/browser.js';
import { Stack } from '../support/stack.js';

// The pages people open, in headless Chromium (Debian's `chromium`, which .ci/run installs; PACT_CHROMIUM
// names another): they render with no console error, page error or failed request; the landing page shows
// this server's rails and access mode and prints an install command that installs a working CLI; the
// reference page renders the operations.

const run = promisify(execFile);
const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

const test = suite<{ open: Stack; invite: Stack }>('pages in chromium');
test.before(async (context) => {
  context.open = await Stack.start();
  // An invite-mode server needs a mail server and an operator to start; the pages mail nothing.
  context.invite = await Stack.start({ env: { PACT_ACCESS_MODE: 'invite', PACT_SMTP_URL: 'smtp://127.0.0.1:1', PACT_ADMIN_PARTY: generateKeyPair().party } });
});
test.after(async ({ open, invite }) => {
  await closeBrowser();
  await invite?.stop();
  await open?.stop();
});

test('the landing page shows the rails and access mode /health reports', async ({ open }) => {
  const health = (await open.client.request('GET', '/health')).body as { rails: string[]; access: { mode: string } };
  assert.ok(health.rails.includes('mock'));
  const [rails, access, title] = await visit(`${open.url}/`, (page) => Promise.all([textOf(page, '#rails'), textOf(page, '#access-mode'), page.title()]));
  for (const rail of health.rails) assert.match(rails, rail);
  assert.match(access, /^open:/);
  assert.match(title, 'Pact');
});

test('an invite-mode server says so on its landing page', async ({ invite }) => {
  const access = await visit(`${invite.url}/`, (page) => textOf(page, '#access-mode'));
  assert.match(access, /^invite:/);
  assert.match(access, 'pact request-access');
});

test('the reference page renders the operations', async ({ open }) => {
  const operations = await visit(`${open.url}/reference/`, async (page) => {
    await page.waitForSelector('.opblock', { timeout: 15_000 });
    return page.$$eval('.opblock-summary-path', (paths) => paths.map((path) => path.textContent ?? ''));
  });
  assert.ok(operations.includes('/pacts'), `operations shown: ${operations.join(', ')}`);
  assert.ok(operations.includes('/health'));
});

test('the install command on the landing page installs a pact CLI that runs', async ({ open }) => {
  const command = await visit(`${open.url}/`, (page) => textOf(page, '#install-command'));
  assert.is(command, `curl -fsSL ${open.url}/install | sh`);
  const home = mkdtempSync(join(tmpdir(), 'pact-install-'));
  try {
    // A new user's shell: this HOME, and none of the npm_* settings `npm test` passes down.
    const env = { ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_'))), HOME: home, PACT_PREFIX: join(home, 'prefix') };
    const installed = await run('sh', ['-c', command], { env, timeout: 180_000 });
    const pact = join(home, 'prefix', 'bin', 'pact');
    // `curl … | sh` exits 0 even when curl fails: say what the installer printed.
    assert.ok(existsSync(pact), `the install command left no ${pact}; it printed:\n${installed.stdout}${installed.stderr}`);
    const { stdout } = await run(pact, ['--version'], { env, timeout: 30_000 });
    assert.is(stdout.trim(), VERSION);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test.run();
