import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { afterAcceptance, publishedOffer } from '../../machines/offer/evolve.js';
import type { Offer } from '../../machines/offer/types.js';
import { matchesFilter, OfferReadModel, viewOf, type OfferFilter } from '../../projection/offer-read-model.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { openLevel, type JsonLevel } from '../../storage/level.js';
import { OfferWatchers } from '../../gateway/offer-watchers.js';
import { offerBy } from '../support/offers.js';
import { prng } from '../support/prng.js';

// Offer search on a real LevelDB, against the plain statement of what matches (`matchesFilter` over every
// offer): seeded random offers and filters, every page followed by `nextSince` to the end.

const test = suite<{ dir: string; level: JsonLevel; model: OfferReadModel }>('offer search');
const SEED = Number(process.env.SEARCH_SEED ?? 20261125);
const TAGS = ['Alpha', 'beta', 'gamma', 'delta', 'eps'];
const WORDS = ['fast', 'pdf', 'summary', 'english', 'tables', 'Zürich', '42'];
const T0 = 1_800_000_000_000;

test.before.each(async (context) => {
  context.dir = mkdtempSync(join(tmpdir(), 'pact-offers-'));
  context.level = await openLevel(context.dir);
  context.model = new OfferReadModel(context.level);
});
test.after.each(async ({ dir, level }) => {
  await level.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every page of a search, followed by `nextSince`; the offers' ids in order. */
async function allPages(model: OfferReadModel, filter: Omit<OfferFilter, 'since'>): Promise<string[]> {
  const ids: string[] = [];
  let since: number | undefined;
  for (let pages = 0; pages < 1_000; pages++) {
    const page = await model.search({ ...filter, ...(since !== undefined ? { since } : {}) });
    ids.push(...page.items.map((text) => (JSON.parse(text) as Offer).offerId));
    if (page.nextSince === null) return ids;
    since = page.nextSince;
  }
  throw new Error('paging did not end');
}

test('random offers and filters: the search finds exactly what matchesFilter says, in time order', async ({ model }) => {
  const rng = prng(SEED);
  const sellers = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
  const offers: Offer[] = [];
  for (let i = 0; i < 400; i++) {
    const signed = offerBy(rng.pick(sellers), T0, {
      tags: rng.subset(TAGS).slice(0, 3),
      text: `${rng.subset(WORDS).join(' ')} offer ${i}`,
      expiresAt: T0 + rng.int(1, 100) * 1_000,
    });
    let offer = publishedOffer(`o_${String(i).padStart(32, '0')}`, signed, T0 + rng.int(0, 60)); // many share a millisecond
    if (rng.next() < 0.1) offer = afterAcceptance(offer, { signer: sellers[0]!.party, acceptanceId: 'a', pactId: 'p_x' }, T0)!;
    offers.push(offer);
  }
  for (let i = 0; i < offers.length; i += 50) await model.putAll(offers.slice(i, i + 50).map((offer, k) => ({ offer, seq: i + k + 1 })), [], { seq: i + 50, listedAt: 0 });
  const inOrder = [...offers].sort((x, y) => x.listedAt - y.listedAt || (x.offerId < y.offerId ? -1 : 1));
  for (let round = 0; round < 60; round++) {
    const filter = {
      tags: rng.subset(TAGS).slice(0, rng.int(0, 2)).map((t) => t.toLowerCase()),
      words: rng.subset(WORDS).slice(0, rng.int(0, 2)).map((w) => w.toLowerCase()),
      ...(rng.next() < 0.3 ? { by: rng.pick(sellers).party } : {}),
      limit: rng.int(1, 30),
      now: T0 + rng.int(0, 100) * 1_000,
    };
    const expected = inOrder.filter((offer) => matchesFilter(viewOf(offer), filter)).map((offer) => offer.offerId);
    assert.equal(await allPages(model, filter), expected, `seed ${SEED}, round ${round}: ${JSON.stringify(filter)}`);
  }
});

test('a watch reads on past search pages that came back empty at their bound, and answers the match', async ({ model }) => {
  const seller = generateKeyPair();
  const records = Array.from({ length: 6_001 }, (_, i) => {
    const tags = i === 6_000 ? ['a', 'b'] : [i % 2 === 0 ? 'a' : 'b'];
    return { offer: publishedOffer(`o_${String(i).padStart(32, '0')}`, offerBy(seller, T0, { tags, expiresAt: T0 + 60_000 }), T0 + i), seq: i + 1 };
  });
  for (let i = 0; i < records.length; i += 1_000) await model.putAll(records.slice(i, i + 1_000), [], { seq: i + 1_000, listedAt: T0 + i });
  const filter = { tags: ['a', 'b'], words: [], limit: 10, now: T0 };
  const first = await model.search(filter);
  assert.equal(first.items, [], 'the first page ends at its bound, empty');
  assert.ok(first.nextSince !== null);
  const watchers = new OfferWatchers((f) => model.search(f), { now: () => T0 }, 10);
  const page = await watchers.watch(filter, 2_000, new AbortController().signal);
  assert.equal(page.items.map((text) => (JSON.parse(text) as Offer).offerId), [records[6_000]!.offer.offerId]);
});

test('a sold-out offer leaves the indexes when written; the sweep takes expired ones out', async ({ model }) => {
  const seller = generateKeyPair();
  const open = publishedOffer('o_open', offerBy(seller, T0, { expiresAt: T0 + 10_000 }), T0);
  const later = publishedOffer('o_later', offerBy(seller, T0, { expiresAt: T0 + 99_000 }), T0 + 1);
  await model.putAll([{ offer: open, seq: 1 }, { offer: later, seq: 2 }], [], { seq: 2, listedAt: T0 + 1 });
  const all = (now: number) => allPages(model, { tags: [], words: [], limit: 10, now });
  assert.equal(await all(T0), ['o_open', 'o_later']);
  assert.is(await model.sweepExpired(T0 + 10_000), 1);
  assert.equal(await all(T0), ['o_later'], 'swept from the indexes (the search at an earlier time shows it)');
  const soldOut = afterAcceptance(later, { signer: seller.party, acceptanceId: 'a', pactId: 'p_x' }, T0 + 2)!;
  await model.putAll([{ offer: soldOut, seq: 3 }], [], { seq: 3, listedAt: T0 + 1 });
  assert.equal(await all(T0), []);
  assert.is((await model.record('o_later'))?.offer.state, 'SOLD_OUT', 'the record stays');
});

test.run();
