import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPair } from '../../protocol/sign.js';
import { forget, reapOnExit } from '../support/reaper.js';
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

let launched: Promise<Browser> | undefined;

/**
 * The one browser of this file, launched on first use, so that a missing Chromium fails each test that needs
 * it (uvu drops an error thrown in `before` and reports nothing failed).
 */
function browser(): Promise<Browser> {
  launched ??= (async () => {
    const executablePath = process.env.PACT_CHROMIUM || '/usr/bin/chromium';
    if (!existsSync(executablePath)) throw new Error(`no Chromium at ${executablePath}: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set PACT_CHROMIUM to its executable`);
    const started = await puppeteer.launch({ executablePath, headless: true, args: ['--no-sandbox'] }); // CI runs as root
    reapOnExit(started.process()?.pid);
    return started;
  })();
  return launched;
}

async function closeBrowser(): Promise<void> {
  const started = await launched?.catch(() => undefined);
  if (!started) return;
  const pid = started.process()?.pid;
  await started.close();
  forget(pid);
}

/**
 * Opens `url` in a new tab, runs `check` on the loaded page, and fails on any console error, page error,
 * failed request or error status seen meanwhile. The tab is closed whatever happens.
 */
async function visit<T>(url: string, check: (page: Page) => Promise<T>): Promise<T> {
  const page = await (await browser()).newPage();
  const problems: string[] = [];
  page.on('console', (message) => message.type() === 'error' && problems.push(`console error: ${message.text()}`));
  page.on('pageerror', (error) => problems.push(`page error: ${String(error)}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => response.status() >= 400 && problems.push(`${response.status()} from ${response.url()}`));
  try {
    const response = await page.goto(url, { waitUntil: 'networkidle0' });
    assert.is(response?.status(), 200, `GET ${url}`);
    const result = await check(page);
    assert.equal(problems, [], `${url}: ${problems.join('; ')}`);
    return result;
  } finally {
    await page.close();
  }
}

const textOf = (page: Page, selector: string) => page.$eval(selector, (element) => element.textContent ?? '');

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
