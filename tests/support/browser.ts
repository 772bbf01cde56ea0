import { existsSync } from 'node:fs';
import puppeteer, { type Browser, type Page, type PuppeteerLifeCycleEvent } from 'puppeteer-core';
import * as assert from 'uvu/assert';
import { forget, reapOnExit } from './reaper.js';

// Headless Chromium for the page tests: Debian's `chromium` (which .ci/run installs), or PACT_CHROMIUM.

let launched: Promise<Browser> | undefined;

/**
 * The one browser of this file, launched on first use, so that a missing Chromium fails each test that needs
 * it (uvu drops an error thrown in `before` and reports nothing failed).
 */
export function browser(): Promise<Browser> {
  launched ??= (async () => {
    const executablePath = process.env.PACT_CHROMIUM || '/usr/bin/chromium';
    if (!existsSync(executablePath)) throw new Error(`no Chromium at ${executablePath}: install Debian's chromium (apt-get install -y chromium; .ci/run does) or set PACT_CHROMIUM to its executable`);
    const started = await puppeteer.launch({ executablePath, headless: true, args: ['--no-sandbox'] }); // CI runs as root
    reapOnExit(started.process()?.pid);
    return started;
  })();
  return launched;
}

/** Closes the browser; the next test file to ask for one launches another (uvu runs every file in one process). */
export async function closeBrowser(): Promise<void> {
  const started = await launched?.catch(() => undefined);
  launched = undefined;
  if (!started) return;
  const pid = started.process()?.pid;
  await started.close();
  forget(pid);
}

/**
 * Opens `url` in a new tab, runs `check` on the loaded page, and fails on any console error, page error,
 * failed request or error status seen meanwhile. The tab is closed whatever happens. A page that keeps a
 * connection open (server-sent events) never idles: wait for `load` instead.
 */
export async function visit<T>(url: string, check: (page: Page) => Promise<T>, waitUntil: PuppeteerLifeCycleEvent = 'networkidle0'): Promise<T> {
  const page = await (await browser()).newPage();
  const problems: string[] = [];
  page.on('console', (message) => message.type() === 'error' && problems.push(`console error: ${message.text()}`));
  page.on('pageerror', (error) => problems.push(`page error: ${String(error)}`));
  page.on('requestfailed', (request) => problems.push(`request failed: ${request.url()} (${request.failure()?.errorText})`));
  page.on('response', (response) => response.status() >= 400 && problems.push(`${response.status()} from ${response.url()}`));
  try {
    const response = await page.goto(url, { waitUntil });
    assert.is(response?.status(), 200, `GET ${url}`);
    const result = await check(page);
    assert.equal(problems, [], `${url}: ${problems.join('; ')}`);
    return result;
  } finally {
    await page.close();
  }
}

export const textOf = (page: Page, selector: string) => page.$eval(selector, (element) => element.textContent ?? '');
