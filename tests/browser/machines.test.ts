import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Page } from 'puppeteer-core';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MACHINES } from '../../diagrams/registry.js';
import { closeBrowser, textOf, visit } from '../support/browser.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// The machine pages in headless Chromium: /machines draws every machine; /machines/pacts/:id follows one pact
// as it is created, funded, proposed, objected to and judged, its highlighted state and journal changing
// without a reload (server-sent events from the journal on NATS). A screenshot is kept in test-artifacts/.

const ARTIFACTS = resolve(import.meta.dirname, '..', '..', 'test-artifacts');
const test = suite<{ stack: Stack }>('machine pages in chromium');
test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await closeBrowser();
  await stack?.stop();
});

test('/machines draws every machine with its states', async ({ stack }) => {
  await visit(`${stack.url}/machines`, async (page) => {
    for (const { name } of MACHINES) {
      const states = await page.$$eval(`#${name} svg g.node`, (nodes) => nodes.map((node) => (node as SVGElement).dataset.id));
      assert.ok(states.length > 1, `${name} has states drawn`);
    }
    const pactStates = await page.$$eval('#pact svg g.node', (nodes) => nodes.map((node) => (node as SVGElement).dataset.id));
    for (const state of ['CREATED', 'ACTIVE', 'PROPOSED', 'DISPUTED', 'SETTLED', 'CANCELLED']) assert.ok(pactStates.includes(state), state);
  });
});

test('/machines/pacts/:id follows the pact through create, fund, propose, object and verdict without a reload', async ({ stack }) => {
  const { seller, buyer } = newParties();
  const created = await stack.client.create(seller, tradeSpec(seller, buyer));
  assert.is(created.status, 200);
  const id = created.body.pact.id as string;
  await visit(
    `${stack.url}/machines/pacts/${id}`,
    async (page) => {
      await page.evaluate(() => ((window as unknown as { loadedOnce: boolean }).loadedOnce = true));
      await seen(page, 'CREATED', 1);
      assert.ok((await page.$eval('#live', (element) => element.textContent)) === 'live', 'the journal streams');

      assert.is((await stack.client.fund(buyer, id)).status, 200);
      await seen(page, 'CREATED', 2);
      assert.is((await stack.client.fund(seller, id)).status, 200);
      await seen(page, 'ACTIVE', 3);
      const proposal = { evidence: [{ note: 'the summary' }], distribution: [{ party: seller.party, bp: 10_000 }] };
      assert.is((await stack.client.propose(seller, id, proposal)).status, 200);
      await seen(page, 'PROPOSED', 4);
      const disputed = await stack.client.object(buyer, id, 'the summary is 900 words, not 500');
      assert.is(disputed.status, 200);
      await seen(page, 'DISPUTED', 5);

      const verdict = await stack.client.verdict(stack.evaluator, id, disputed.body.pact.inputHash!, [{ party: buyer.party, bp: 10_000 }], 'proposer', 'not delivered');
      assert.is(verdict.status, 200, JSON.stringify(verdict.body));
      await seen(page, 'SETTLED', 7); // the verdict, and the payout worker's record of what it paid
      const verdictRow = await textOf(page, '#journal tbody tr:nth-child(6)');
      const paidRow = await textOf(page, '#journal tbody tr:nth-child(7)');
      assert.match(paidRow, 'payoutsRecorded');
      assert.match(paidRow, 'unsigned');
      assert.match(verdictRow, 'verdict');
      assert.match(verdictRow, stack.evaluator.party, 'the verdict row names the evaluator as its signer');
      assert.match(verdictRow, '→', `the verdict row lists the payouts it planned: ${verdictRow}`);
      assert.ok(await page.evaluate(() => (window as unknown as { loadedOnce?: boolean }).loadedOnce), 'the page was never reloaded');

      mkdirSync(ARTIFACTS, { recursive: true });
      await page.setViewport({ width: 1400, height: 1000 });
      await page.screenshot({ path: join(ARTIFACTS, 'machines-pact.png'), fullPage: true });
      // On a phone the chart keeps a readable size (it scrolls sideways) and the journal's rows become blocks.
      await page.setViewport({ width: 390, height: 844, isMobile: true });
      assert.ok((await page.$eval('.chart svg', (svg) => svg.getBoundingClientRect().width)) >= 800, 'the chart is not shrunk to the phone');
      assert.is(await page.$eval('#journal thead', (head) => getComputedStyle(head).display), 'none');
      await page.screenshot({ path: join(ARTIFACTS, 'machines-pact-phone.png'), fullPage: true });
    },
    'load',
  );
});

test('a pact that does not exist: 404 for the page and its journal', async ({ stack }) => {
  for (const path of ['/machines/pacts/p_00000000000000000000000000000000', '/machines/pacts/p_00000000000000000000000000000000/journal', '/machines/pacts/nonsense']) {
    const response = await stack.client.request('GET', path);
    assert.is(response.status, 404, path);
    assert.is(response.body.error, 'not_found');
  }
});

/**
 * Waits until the page highlights `state` and shows at least `rows` journal rows (a settlement's payouts are
 * recorded in a row of their own, which may follow at once).
 */
async function seen(page: Page, state: string, rows: number): Promise<void> {
  try {
    await page.waitForFunction(
      (state, rows) =>
        document.querySelector('.chart g.node.current')?.getAttribute('data-id') === state && document.querySelectorAll('#journal tbody tr').length >= rows,
      { timeout: 15_000 },
      state,
      rows,
    );
  } catch {
    const current = await page.$eval('.chart g.node.current', (node) => node.getAttribute('data-id')).catch(() => 'none');
    const shown = await page.$$eval('#journal tbody tr', (trs) => trs.map((tr) => tr.textContent));
    assert.unreachable(`expected ${state} with ${rows} rows; the page shows ${current} and ${JSON.stringify(shown)}`);
  }
}

test.run();
