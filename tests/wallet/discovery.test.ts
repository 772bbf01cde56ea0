import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';
import { documentFits, usd, walletCall as call } from '../support/wallet-client.js';

// The catalog, the normalised x402 and MPP registry, and discovery over HTTP (no bearer), from the data shipped
// with the service.

const test = suite<{ stack: Stack }>('catalog, registry and discovery over HTTP');
test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack?.stop();
});

test('the catalog: capabilities with their providers and prices; filters by category and words', async ({ stack }) => {
  const fits = await documentFits(stack);
  const all = await call(stack, 'GET', '/v1/catalog');
  fits('GET', '/v1/catalog', all, 200);
  const extract = all.body.capabilities.find((c: { id: string }) => c.id === 'web.extract');
  assert.equal([extract.status, extract.providers.length, extract.pricing], ['active', 2, { mode: 'dynamic', price: usd(2000), maxPrice: usd(5000) }]);
  const text = (await call(stack, 'GET', '/v1/catalog?category=text')).body.capabilities.map((c: { id: string }) => c.id).sort();
  assert.equal(text, ['text.keywords', 'text.sentiment', 'text.summarize', 'text.translate']);
  assert.equal((await call(stack, 'GET', '/v1/catalog?q=weather%20forecast')).body.capabilities.map((c: { id: string }) => c.id), ['weather.forecast']);
  fits('GET', '/v1/catalog', await call(stack, 'GET', '/v1/catalog?color=blue'), 400);
});

test('the registry: one item per endpoint from both sources, filtered and paged by cursor', async ({ stack }) => {
  const fits = await documentFits(stack);
  const first = await call(stack, 'GET', '/v1/registry?limit=5');
  fits('GET', '/v1/registry', first, 200);
  assert.is(first.body.items.length, 5);
  const seen = [...first.body.items];
  for (let cursor = first.body.nextCursor; cursor; ) {
    const page = (await call(stack, 'GET', `/v1/registry?limit=5&cursor=${cursor}`)).body;
    seen.push(...page.items);
    cursor = page.nextCursor;
  }
  assert.is(seen.length, 18);
  assert.is(new Set(seen.map((item) => item.id)).size, 18);
  const mpp = (await call(stack, 'GET', '/v1/registry?rail=mpp')).body.items;
  assert.ok(mpp.every((item: { rail: string; payment: { intent: string } }) => item.rail === 'mpp' && item.payment.intent === 'charge'));
  const summarize = mpp.find((item: { resource: string }) => item.resource.endsWith('/v1/summarize'));
  assert.equal([summarize.price, summarize.payment.amount, summarize.payment.decimals], [usd(3000), '3000', 6], '"0.003" of a 6-decimal token is 3000 micro-USD');
  const cheap = (await call(stack, 'GET', '/v1/registry?maxPrice=1000')).body.items;
  assert.ok(cheap.length > 0 && cheap.every((item: { price: { amount: string } }) => BigInt(item.price.amount) <= 1000n));
  assert.is((await call(stack, 'GET', '/v1/registry?q=weather')).body.items.length, 1);
  fits('GET', '/v1/registry', await call(stack, 'GET', '/v1/registry?cursor=nonsense'), 400);
  fits('GET', '/v1/registry', await call(stack, 'GET', '/v1/registry?rail=card'), 400);
});

test('discover: ranked results with reasons and signals; maxPrice and rails are hard filters; an empty task is 400', async ({ stack }) => {
  const fits = await documentFits(stack);
  const weather = await call(stack, 'POST', '/v1/discover', { task: 'will it rain in Lisbon tomorrow?' });
  fits('POST', '/v1/discover', weather, 200);
  const [top] = weather.body.results;
  assert.equal([top.rank, top.capabilityId, top.rail], [1, 'weather.forecast', 'x402']);
  assert.ok(top.reasons.some((reason: string) => reason.includes('"rain"')), JSON.stringify(top.reasons));
  assert.equal([top.executable, top.blockingRequirements.length > 0], [false, true], 'executions are not built yet: said, not hidden');

  const pages = (await call(stack, 'POST', '/v1/discover', { task: 'extract the text of a web page', optimize: 'cost' })).body.results;
  assert.equal(pages.slice(0, 2).map((r: { capabilityId: string }) => r.capabilityId), ['web.extract', 'web.extract']);
  assert.ok(BigInt(pages[0].price.amount) <= BigInt(pages[1].price.amount), 'optimize cost: the cheaper provider first');
  const capped = (await call(stack, 'POST', '/v1/discover', { task: 'extract the text of a web page', maxPrice: usd(3000) })).body.results;
  assert.ok(capped.every((r: { price: { amount: string } }) => BigInt(r.price.amount) <= 3000n));
  const mppOnly = (await call(stack, 'POST', '/v1/discover', { task: 'summarize a report', rails: ['mpp'] })).body.results;
  assert.ok(mppOnly.length > 0 && mppOnly.every((r: { rail: string }) => r.rail === 'mpp'));
  assert.equal((await call(stack, 'POST', '/v1/discover', { task: 'zzzz qqqq' })).body.results, []);
  for (const body of [{ task: '   ' }, {}, { task: 'x', limit: 0 }, { task: 'x', optimize: 'fastest' }]) fits('POST', '/v1/discover', await call(stack, 'POST', '/v1/discover', body), 400);
});

test.run();
