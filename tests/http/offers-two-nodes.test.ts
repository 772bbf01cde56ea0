import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Offer } from '../../machines/offer/types.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { offerBy } from '../support/offers.js';
import { Stack } from '../support/stack.js';

// Two service processes on one NATS, each with its own gateway, offer desk and read model: an offer is one
// offer whichever gateway takes its acceptances, and a watch on one is woken by a publish through the other.

const test = suite<{ first: Stack; second: Stack }>('offers on two nodes');

test.before(async (context) => {
  context.first = await Stack.start();
  context.second = await Stack.start({ natsUrl: context.first.natsUrl });
});
test.after(async ({ first, second }) => {
  await second.stop();
  await first.stop();
});

async function publishOn(stack: Stack, fields: Record<string, unknown> = {}): Promise<Offer> {
  const response = await stack.client.request('POST', '/offers', offerBy(generateKeyPair(), stack.now, fields));
  assert.is(response.status, 200, JSON.stringify(response.body));
  return response.body.offer as Offer;
}

test('concurrent accepts of the last units through both gateways: one pact per unit, the rest sold out', async ({ first, second }) => {
  for (const inventory of [1, 3]) {
    const offer = await publishOn(first, { inventory });
    const gateways = [first, second];
    const answers = await Promise.all(
      Array.from({ length: 16 }, (_, i) => gateways[i % 2]!.client.acceptOffer(generateKeyPair(), offer.offerId, `race-${i}`)),
    );
    const statuses = answers.map((a) => a.status);
    assert.is(statuses.filter((s) => s === 200).length, inventory, JSON.stringify(answers.filter((a) => a.status !== 409 && a.status !== 200).map((a) => a.body)));
    assert.is(statuses.filter((s) => s === 409).length, 16 - inventory);
    const pacts = new Set(answers.filter((a) => a.status === 200).map((a) => a.body.pact.id));
    assert.is(pacts.size, inventory);
    for (const stack of gateways) {
      const listed = (await stack.client.list({ groupId: offer.offerId })).body.pacts.map((p) => p.id);
      assert.equal(new Set(listed), pacts);
    }
  }
});

test('an acceptance retried through the other gateway answers with the same pact and takes no unit', async ({ first, second }) => {
  const offer = await publishOn(second, { inventory: 2 });
  const buyer = generateKeyPair();
  const pactId = (await first.client.acceptOffer(buyer, offer.offerId, 'once')).body.pact.id;
  const retried = await second.client.acceptOffer(buyer, offer.offerId, 'once');
  assert.is(retried.status, 200, JSON.stringify(retried.body));
  assert.is(retried.body.pact.id, pactId);
  const seen = (await second.client.searchOffers({ by: offer.by })).body.offers;
  assert.equal(seen.map((o) => o.remaining), [1]);
});

test('a watch on one node is woken by a publish through the other', async ({ first, second }) => {
  const tag = `watch${Date.now()}`;
  const since = second.now;
  const watching = second.client.watchOffers({ tags: tag, since, timeoutMs: 30_000 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const offer = await publishOn(first, { tags: [tag] });
  const woken = await watching;
  assert.is(woken.status, 200);
  assert.equal(woken.body.offers.map((o) => o.offerId), [offer.offerId], 'answered with the offer, not empty at the timeout');
});

test.run();
