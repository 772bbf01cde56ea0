import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { hitRates, labelledTasks } from '../../wallet/discovery/evaluate.js';
import { offeringsOf as offeringsIn, rank } from '../../wallet/discovery/rank.js';
import { Catalog } from '../../wallet/registry/catalog.js';
import { fromBazaar, fromMppDirectory } from '../../wallet/registry/normalize.js';
import { Registry } from '../../wallet/registry/registry.js';

// The ranking on the labelled tasks shipped beside it, and the normalisers of the two registry sources.

const test = suite('discovery ranking and registry sources');
const NOW = Date.parse('2026-11-20T00:00:00Z');

const offeringsOf = (registry: Registry) => offeringsIn(new Catalog(registry), registry);

test('the labelled tasks: the expected capability is first for at least 90 %, among the first three for at least 95 %', async () => {
  const offerings = offeringsOf(Registry.shipped());
  const { at1, at3, misses } = await hitRates(labelledTasks(), async (task) => rank(offerings, { task, limit: 10 }, NOW, () => []));
  assert.ok(at1 >= 0.9, `hit rate at 1: ${at1} ${JSON.stringify(misses)}`);
  assert.ok(at3 >= 0.95, `hit rate at 3: ${at3} ${JSON.stringify(misses)}`);
});

test('an unreachable provider is dropped from ranking; quality and price break ties between providers', () => {
  const registry = Registry.shipped();
  const extract = new Catalog(registry).get('web.extract')!;
  const [cheap, dear] = [...extract.providers].sort((a, b) => Number(BigInt(a.price.amount) - BigInt(b.price.amount)));
  const task = { task: 'extract the text of a web page', limit: 5 };
  assert.is(rank(offeringsOf(registry), task, NOW, () => [])[0]!.registryId, cheap!.registryId, 'cheaper, and more payers');
  registry.mark(cheap!.registryId!, 'unreachable', new Date(NOW).toISOString());
  const after = rank(offeringsOf(registry), task, NOW, () => []);
  assert.is(after[0]!.registryId, dear!.registryId);
  assert.not.ok(after.some((r) => r.registryId === cheap!.registryId));
  assert.is(new Catalog(registry).get('web.extract')!.pricing.price.amount, dear!.price.amount, 'the catalog prices from active providers');
});

test('bazaar resources: v2 amount and v1 maxAmountRequired, the method of the bazaar input; anything unreadable is left out', () => {
  const items = fromBazaar({
    source: 'b',
    fetchedAt: '2026-11-20T00:00:00.000Z',
    items: [
      { resource: 'https://a.example/x', accepts: [{ scheme: 'exact', network: 'eip155:8453', amount: '1500', asset: '0xa', payTo: '0xb' }], extensions: { bazaar: { info: { input: { method: 'post' } } } } },
      { resource: 'https://b.example/y', accepts: [{ scheme: 'exact', network: 'base', maxAmountRequired: '700', asset: '0xa', payTo: '0xb' }] },
      { resource: 'https://c.example/z', accepts: [{ scheme: 'upto', amount: '5' }] },
      { accepts: [{ scheme: 'exact', amount: '5' }] },
      'nonsense',
    ],
  });
  assert.equal(items.map((i) => [i.method, i.price.amount, i.provider]), [['POST', '1500', 'a.example'], ['GET', '700', 'b.example']]);
});

test('mpp services: one item per endpoint; decimal prices in the token units; unreadable prices left out', () => {
  const items = fromMppDirectory({
    services: [
      { name: 'S', baseUrl: 'https://s.example', endpoints: [{ path: '/a', amount: '0.25', decimals: 6 }, { path: '/b', amount: '1', decimals: 18 }, { path: '/c', amount: '0.0000001', decimals: 6 }, { path: '/d', amount: 'free', decimals: 6 }] },
    ],
  });
  assert.equal(items.map((i) => [i.resource, i.price.amount, i.payment.amount]), [['https://s.example/a', '250000', '250000'], ['https://s.example/b', '1000000', '1000000000000000000']]);
});

test.run();
