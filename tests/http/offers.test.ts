import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Offer } from '../../machines/offer/types.js';
import type { Pact } from '../../machines/pact/types.js';
import { generateKeyPair, signed, type KeyPair } from '../../protocol/sign.js';
import { runAudit } from '../support/audit.js';
import { DAY_MS, offerBy, template } from '../support/offers.js';
import { usdc } from '../support/pacts.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// The offers registry over HTTP (DECISIONS.md, Offers): publish, search, watch, accept, and every refusal.

const test = suite<{ stack: Stack }>('offers');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

const publish = (stack: Stack, body: unknown) => stack.client.request('POST', '/offers', body);
/** The error code of a refused call. */
const errorOf = (response: { body: unknown }) => (response.body as { error?: string }).error;
/** Publishes an offer by a new seller (with `fields`), asserting it is taken; returns the offer and the seller. */
async function published(stack: Stack, fields: Record<string, unknown> = {}): Promise<{ offer: Offer; seller: KeyPair }> {
  const seller = generateKeyPair();
  const response = await publish(stack, offerBy(seller, stack.now, fields));
  assert.is(response.status, 200, JSON.stringify(response.body));
  return { offer: response.body.offer as Offer, seller };
}
const searchIds = async (stack: Stack, query: Record<string, string | number>) => (await stack.client.searchOffers(query)).body.offers.map((o) => o.offerId);
const uniqueTag = () => `t${Math.random().toString(36).slice(2)}`;

test('publish: the offer comes back with its id, publisher and inventory; publishing it again answers the same', async ({ stack }) => {
  const seller = generateKeyPair();
  const body = offerBy(seller, stack.now, { inventory: 3 });
  const first = await publish(stack, body);
  assert.is(first.status, 200, JSON.stringify(first.body));
  const { offer } = first.body;
  assert.match(offer.offerId, /^o_[0-9a-f]{32}$/);
  assert.is(offer.by, seller.party);
  assert.is(offer.remaining, 3);
  assert.is(offer.state, 'OPEN');
  assert.equal(offer.template, body.template);
  assert.is(offer.sig, body.sig);
  const again = await publish(stack, body);
  assert.is(again.status, 200);
  assert.equal(again.body.offer, offer);
  assert.is((await published(stack)).offer.remaining, 1, 'inventory defaults to 1');
});

test('publish refusals: shape 400, server-owned policy 400, signature 401, time 422, pact 404 and 403', async ({ stack }) => {
  const seller = generateKeyPair();
  const expect = async (body: unknown, status: number, error: string, field?: string) => {
    const response = await publish(stack, body);
    assert.is(response.status, status, `${error}: ${JSON.stringify(response.body)}`);
    assert.is(response.body.error, error);
    if (field) assert.is(response.body.field, field);
  };
  const pactId = `p_${'0'.repeat(32)}`;
  const { template: _t, ...noTemplate } = offerBy(seller, stack.now);
  await expect(signed({ ...noTemplate, sig: undefined }, seller), 400, 'invalid_request'); // neither (re-signed without sig)
  await expect(offerBy(seller, stack.now, { pactId, template: template() }), 400, 'invalid_request');
  await expect(offerBy(seller, stack.now, { inventory: 0 }), 400, 'invalid_request');
  await expect(offerBy(seller, stack.now, { inventory: 10_001 }), 400, 'invalid_request');
  await expect(offerBy(seller, stack.now, { inventory: 1.5 }), 400, 'invalid_request');
  await expect(offerBy(seller, stack.now, { tags: ['has space'] }), 400, 'invalid_request');
  await expect(offerBy(seller, stack.now, { template: template({ sellerBond: { amount: '5', asset: 'EURC' } }) }), 400, 'invalid_request');
  await expect(offerBy(seller, stack.now, { template: template({ rail: 'x402' }) }), 400, 'rail_not_available');
  await expect(offerBy(seller, stack.now, { evaluator: { model: 'mine' } }), 400, 'evaluator_policy_is_server_owned', 'evaluator');
  await expect(offerBy(seller, stack.now, { arbitrationFeeRecipient: seller.party }), 400, 'evaluator_policy_is_server_owned', 'arbitrationFeeRecipient');
  await expect(offerBy(seller, stack.now, { template: { ...template(), evaluator: { pubkey: seller.party } } }), 400, 'evaluator_policy_is_server_owned', 'template.evaluator');
  await expect(offerBy(seller, stack.now, { template: { ...template(), arbitrationFeeRecipient: seller.party } }), 400, 'evaluator_policy_is_server_owned', 'template.arbitrationFeeRecipient');
  await expect({ ...offerBy(seller, stack.now), text: 'changed after signing' }, 401, 'invalid_signature');
  await expect({ ...offerBy(seller, stack.now), by: generateKeyPair().party }, 401, 'invalid_signature');
  await expect(offerBy(seller, stack.now, { expiresAt: stack.now - 1 }), 422, 'expiresAt_out_of_range');
  await expect(offerBy(seller, stack.now, { expiresAt: stack.now + 31 * DAY_MS }), 422, 'expiresAt_out_of_range');
  await expect(offerBy(seller, stack.now, { pactId }), 404, 'not_found');
  const { seller: a, buyer: b } = newParties();
  const pact = (await stack.client.create(a, tradeSpec(a, b))).body.pact as Pact;
  await expect(offerBy(generateKeyPair(), stack.now, { pactId: pact.id }), 403, 'forbidden');
  // Nothing refused is searchable.
  assert.equal(await searchIds(stack, { by: seller.party }), []);
  const ok = await publish(stack, offerBy(a, stack.now, { pactId: pact.id }));
  assert.is(ok.status, 200, JSON.stringify(ok.body));
  assert.is(ok.body.offer.pactId, pact.id);
  const allowed = await publish(stack, offerBy(seller, stack.now, { evaluator: {}, template: { ...template(), evaluator: {} } }));
  assert.is(allowed.status, 200, 'an empty evaluator says nothing and is accepted');
});

test('search: every tag must match (in any case), q matches words of the text, by, and the newest are last', async ({ stack }) => {
  const [red, blue] = [uniqueTag(), uniqueTag()];
  const a = await published(stack, { tags: [red, blue], text: 'Fast PDF summaries, in English' });
  const b = await published(stack, { tags: [red], text: 'Slow translations' });
  const c = await published(stack, { tags: [blue.toUpperCase()], text: 'pdf tables extracted' });
  assert.equal(await searchIds(stack, { tags: red }), [a.offer.offerId, b.offer.offerId]);
  assert.equal(await searchIds(stack, { tags: `${red},${blue}` }), [a.offer.offerId]);
  assert.equal(await searchIds(stack, { tags: blue }), [a.offer.offerId, c.offer.offerId]);
  assert.equal(await searchIds(stack, { tags: `${red.toUpperCase()}, ${blue}` }), [a.offer.offerId]);
  assert.equal(await searchIds(stack, { tags: blue, q: 'PDF' }), [a.offer.offerId, c.offer.offerId]);
  assert.equal(await searchIds(stack, { tags: blue, q: 'pdf english' }), [a.offer.offerId]);
  assert.equal(await searchIds(stack, { tags: blue, q: 'engl' }), [], 'q matches whole words');
  assert.equal(await searchIds(stack, { q: 'translations' , by: b.seller.party }), [b.offer.offerId]);
  assert.equal(await searchIds(stack, { by: c.seller.party }), [c.offer.offerId]);
  assert.equal(await searchIds(stack, { tags: red, by: c.seller.party }), []);
  const found = (await stack.client.searchOffers({ tags: red })).body.offers[0]!;
  assert.is(found.by, a.seller.party, 'results carry the publisher');
});

test('search pages: since is an exclusive millisecond cursor, and pages follow nextSince to the end', async ({ stack }) => {
  const tag = uniqueTag();
  const ids: string[] = [];
  for (let i = 0; i < 7; i++) ids.push((await published(stack, { tags: [tag], text: `offer ${i}` })).offer.offerId);
  const seen: string[] = [];
  let since: number | null | undefined;
  for (let page = 0; page < 10; page++) {
    const response = await stack.client.searchOffers({ tags: tag, limit: 3, ...(since != null ? { since } : {}) });
    seen.push(...response.body.offers.map((o) => o.offerId));
    since = response.body.nextSince;
    if (since === null) break;
    assert.ok(response.body.offers.every((o) => o.listedAt <= since!));
  }
  assert.is(since, null);
  assert.equal(seen, ids);
  const last = (await stack.client.searchOffers({ tags: tag })).body.offers.at(-1)!;
  assert.equal(await searchIds(stack, { tags: tag, since: last.listedAt }), []);
});

test('a watcher following its cursor while 20 publish at once sees every offer once', async ({ stack }) => {
  const tag = uniqueTag();
  const total = 400;
  const seen: string[] = [];
  let since: number | undefined;
  let publishing = true;
  const following = (async () => {
    const deadline = Date.now() + 60_000;
    for (let rounds = 0; rounds < 2_000 && Date.now() < deadline && (publishing || seen.length < total); rounds++) {
      const { body } = await stack.client.watchOffers({ tags: tag, limit: 200, timeoutMs: 1_000, ...(since !== undefined ? { since } : {}) });
      seen.push(...body.offers.map((o) => o.offerId));
      if (body.nextSince !== null) since = body.nextSince;
      else if (body.offers.length > 0) since = body.offers.at(-1)!.listedAt;
      else if (!publishing) break;
    }
  })();
  let next = 0;
  const publishers = Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next++ < total) await published(stack, { tags: [tag], text: `racing ${next}` });
    }),
  ).finally(() => (publishing = false));
  await Promise.all([publishers, following]);
  assert.is(new Set(seen).size, seen.length, 'no offer twice');
  assert.is(seen.length, total, 'no offer skipped');
});

test('search and watch refuse bad parameters with 400', async ({ stack }) => {
  const manyTags = Array.from({ length: 9 }, (_, i) => `t${i}`).join(',');
  const manyWords = Array.from({ length: 9 }, (_, i) => `w${i}`).join('+');
  for (const query of ['limit=201', 'limit=0', 'since=-1', 'since=abc', 'by=me', 'unknown=1', `tags=${'x'.repeat(65)}`, `q=${'x'.repeat(257)}`, `tags=${manyTags}`, `q=${manyWords}`, 'tags=a!b', 'tags=a%20b']) {
    const response = await stack.client.request('GET', `/offers?${query}`);
    assert.is(response.status, 400, query);
    assert.is(response.body.error, 'invalid_request', query);
  }
  for (const query of ['timeoutMs=30001', 'timeoutMs=-1', 'timeoutMs=1e3']) {
    const response = await stack.client.request('GET', `/offers/watch?${query}`);
    assert.is(response.status, 400, query);
  }
});

test('accept: a pact from the template, buyer the signer, seller the publisher; retried, the same pact and no inventory', async ({ stack }) => {
  const { offer, seller } = await published(stack, { inventory: 2, template: template({ windows: { perform: 7_200_000 } }) });
  const buyer = generateKeyPair();
  const accepted = await stack.client.acceptOffer(buyer, offer.offerId, 'order-1');
  assert.is(accepted.status, 200, JSON.stringify(accepted.body));
  const pact = accepted.body.pact;
  assert.is(pact.state, 'CREATED');
  assert.equal(pact.parties.map((p) => [p.party, p.deposit, p.bond, p.required]), [
    [seller.party, usdc(0), usdc(50), true],
    [buyer.party, usdc(1001), usdc(75), true],
  ]);
  assert.is(pact.proposer, seller.party);
  assert.is(pact.groupId, offer.offerId);
  assert.equal(pact.sourceOffer, { id: offer.offerId, by: seller.party });
  assert.equal(pact.terms, template().terms);
  assert.is(pact.windows.perform, 7_200_000);
  assert.is(pact.createdBy, buyer.party);

  const retried = await stack.client.acceptOffer(buyer, offer.offerId, 'order-1'); // a new call, same acceptance
  assert.is(retried.status, 200);
  assert.is(retried.body.pact.id, pact.id);
  assert.is((await stack.client.searchOffers({ by: seller.party })).body.offers[0]!.remaining, 1, 'a retry takes no unit');
  const listed = (await stack.client.list({ groupId: offer.offerId })).body.pacts;
  assert.equal(listed.map((p) => p.id), [pact.id]);

  const second = await stack.client.acceptOffer(buyer, offer.offerId, 'order-2');
  assert.is(second.status, 200);
  assert.is.not(second.body.pact.id, pact.id);
  const soldOut = await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'order-1');
  assert.is(soldOut.status, 409);
  assert.is(errorOf(soldOut), 'sold_out');
  assert.equal(await searchIds(stack, { by: seller.party }), [], 'a sold-out offer never appears');
  const late = await stack.client.acceptOffer(buyer, offer.offerId, 'order-1');
  assert.is(late.body.pact.id, pact.id, 'a retry after the offer sold out still answers with its pact');
});

test('the pact of an acceptance runs like any other: both fund, it activates; the audit re-verifies it', async ({ stack }) => {
  const { offer, seller } = await published(stack);
  const buyer = generateKeyPair();
  const pactId = (await stack.client.acceptOffer(buyer, offer.offerId, 'x')).body.pact.id;
  assert.is((await stack.client.fund(buyer, pactId)).status, 200);
  const funded = await stack.client.fund(seller, pactId);
  assert.is(funded.status, 200, JSON.stringify(funded.body));
  assert.is(funded.body.pact.state, 'ACTIVE');
  const audit = await runAudit(stack.natsUrl, pactId);
  assert.is(audit.code, 0, audit.output);
});

test('accept refusals: 400, 401, 403, 404, 409, 422, and none takes a unit', async ({ stack }) => {
  const { offer, seller } = await published(stack);
  const buyer = generateKeyPair();
  const call = (fields: Record<string, unknown> = {}, key = buyer) =>
    signed({ action: 'offers.accept', call: { acceptanceId: 'a' }, pactId: offer.offerId, stateNonce: 0, issuedAt: stack.now, signer: key.party, ...fields }, key);
  const expect = async (path: string, body: unknown, status: number, error: string) => {
    const response = await stack.client.request('POST', path, body);
    assert.is(response.status, status, `${error}: ${JSON.stringify(response.body)}`);
    assert.is(response.body.error, error);
  };
  const path = `/offers/${offer.offerId}/accept`;
  await expect(path, call({ call: { acceptanceId: 'a', extra: 1 } }), 400, 'invalid_request');
  await expect(path, call({ call: { acceptanceId: 'has space' } }), 400, 'invalid_request');
  await expect(path, call({ call: {} }), 400, 'invalid_request');
  await expect(path, call({ stateNonce: 1 }), 400, 'invalid_request');
  await expect(path, call({ action: 'pacts.fund' }), 401, 'invalid_signature');
  await expect(path, call({ pactId: `o_${'0'.repeat(32)}` }), 401, 'invalid_signature');
  await expect(path, { ...call(), issuedAt: stack.now + 1 }, 401, 'invalid_signature');
  await expect(path, call({ issuedAt: Date.now() - 11 * 60_000 }), 422, 'stale_issuedAt');
  await expect(path, call({ issuedAt: stack.now + 11 * 60_000 }), 422, 'too_early');
  await expect(path, call({}, seller), 403, 'forbidden');
  const unknown = `o_${'1'.repeat(32)}`;
  await expect(`/offers/${unknown}/accept`, call({ pactId: unknown }), 404, 'not_found');
  await expect('/offers/not-an-id/accept', call({ pactId: 'not-an-id' }), 404, 'not_found');
  const { seller: a, buyer: b } = newParties();
  const pact = (await stack.client.create(a, tradeSpec(a, b))).body.pact as Pact;
  const pactOffer = (await publish(stack, offerBy(a, stack.now, { pactId: pact.id }))).body.offer;
  await expect(`/offers/${pactOffer.offerId}/accept`, call({ pactId: pactOffer.offerId }), 409, 'offer_not_acceptable');
  assert.is((await stack.client.searchOffers({ by: seller.party })).body.offers[0]!.remaining, 1);
  assert.is((await stack.client.acceptOffer(buyer, offer.offerId, 'a')).status, 200);
});

test('concurrent accepts of the last unit: exactly one pact', async ({ stack }) => {
  const { offer } = await published(stack);
  const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => stack.client.acceptOffer(generateKeyPair(), offer.offerId, `c${i}`)));
  assert.equal(answers.map((a) => a.status).sort(), [200, ...Array(11).fill(409)]);
  assert.ok(answers.filter((a) => a.status === 409).every((a) => errorOf(a) === 'sold_out'));
  assert.is((await stack.client.list({ groupId: offer.offerId })).body.pacts.length, 1);
});

test('watch: at once when a match exists; woken by a publish; empty at the timeout', async ({ stack }) => {
  const tag = uniqueTag();
  const existing = await published(stack, { tags: [tag] });
  const atOnce = await stack.client.watchOffers({ tags: tag, timeoutMs: 30_000 });
  assert.equal(atOnce.body.offers.map((o) => o.offerId), [existing.offer.offerId]);

  const since = existing.offer.listedAt;
  const watching = stack.client.watchOffers({ tags: tag, since, timeoutMs: 30_000 });
  const other = stack.client.watchOffers({ tags: uniqueTag(), since, timeoutMs: 1_500 });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await published(stack, { tags: ['unrelated'] });
  const fresh = await published(stack, { tags: [tag, 'more'] });
  const woken = await watching;
  assert.is(woken.status, 200);
  assert.equal(woken.body.offers.map((o) => o.offerId), [fresh.offer.offerId], 'answered with the new match, before its 30 s timeout');
  const timedOut = await other;
  assert.is(timedOut.status, 200);
  assert.equal(timedOut.body.offers, []);
});

test('expired offers never appear and cannot be accepted (410); a retry of an earlier acceptance still answers', async ({ stack }) => {
  const tag = uniqueTag();
  const { offer } = await published(stack, { tags: [tag], expiresAt: stack.now + 60_000, inventory: 2 });
  const buyer = generateKeyPair();
  const pactId = (await stack.client.acceptOffer(buyer, offer.offerId, 'early')).body.pact.id;
  assert.equal(await searchIds(stack, { tags: tag }), [offer.offerId]);
  await stack.advanceClock(60_000);
  assert.equal(await searchIds(stack, { tags: tag }), []);
  const expired = await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'late');
  assert.is(expired.status, 410);
  assert.is(errorOf(expired), 'offer_expired');
  const retried = await stack.client.acceptOffer(buyer, offer.offerId, 'early');
  assert.is(retried.status, 200);
  assert.is(retried.body.pact.id, pactId);
});

test('an acceptance whose pact is cancelled unfunded at its fund deadline gives its unit back, once', async ({ stack }) => {
  const { offer, seller } = await published(stack, { expiresAt: stack.now + 3 * DAY_MS });
  const idle = (await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'never-pays')).body.pact;
  assert.is(errorOf(await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'blocked')), 'sold_out');
  await stack.advanceClock(idle.fundBy - stack.now); // the keeper cancels it; the hook then runs the reconcilers
  assert.is((await stack.client.get(idle.id)).body.pact.state, 'CANCELLED');
  const reopened = (await stack.client.searchOffers({ by: seller.party, since: offer.listedAt })).body.offers;
  assert.equal(reopened.map((o) => [o.offerId, o.remaining, o.released]), [[offer.offerId, 1, 1]], 'listed again, after where it stood');
  await stack.advanceClock(1_000); // another pass gives nothing back twice
  assert.is((await stack.client.searchOffers({ by: seller.party })).body.offers[0]!.remaining, 1);
  const buyer = generateKeyPair();
  const taken = await stack.client.acceptOffer(buyer, offer.offerId, 'pays');
  assert.is(taken.status, 200, JSON.stringify(taken.body));
  assert.is((await stack.client.fund(buyer, taken.body.pact.id)).status, 200);
  assert.is((await stack.client.fund(seller, taken.body.pact.id)).body.pact.state, 'ACTIVE');
  assert.is(errorOf(await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'late')), 'sold_out');
  assert.is((await stack.client.acceptOffer(buyer, offer.offerId, 'pays')).body.pact.id, taken.body.pact.id);
});

test('after a restart (kill -9): search finds what was published, inventory is what was left, acceptances repeat', async ({ stack }) => {
  const tag = uniqueTag();
  const { offer } = await published(stack, { tags: [tag], inventory: 2 });
  const buyer = generateKeyPair();
  const pactId = (await stack.client.acceptOffer(buyer, offer.offerId, 'before')).body.pact.id;
  await stack.kill('SIGKILL');
  await stack.startServer();
  const found = (await stack.client.searchOffers({ tags: tag })).body.offers;
  assert.equal(found.map((o) => [o.offerId, o.remaining]), [[offer.offerId, 1]]);
  assert.is((await stack.client.acceptOffer(buyer, offer.offerId, 'before')).body.pact.id, pactId);
  assert.is((await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'after')).status, 200);
  assert.is(errorOf(await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'too-late')), 'sold_out');
});

test.run();
