// The offer machine and its rules (DECISIONS.md, Offers): ids, the pact an acceptance makes, the refusals
// in their order, inventory, and the replay of an offer's journal.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { applyOfferEntry, type OfferEntry } from '../../actors/offer-journal.js';
import { JournalReplayError } from '../../actors/replay.js';
import { afterAcceptance, afterRelease, entriesAfterPublication, publishedOffer } from '../../machines/offer/evolve.js';
import {
  acceptanceRefusal,
  acceptedPactId,
  MAX_OFFER_LIFETIME_MS,
  offerIdOf,
  offerShapeProblem,
  offerTimeProblem,
  pactSpecOf,
  releasesUnit,
  signedOfferOf,
} from '../../machines/offer/rules.js';
import type { Pact } from '../../machines/pact/types.js';
import type { Offer, SignedOffer } from '../../machines/offer/types.js';
import { specProblem } from '../../machines/pact/spec.js';
import { ERROR_STATUS } from '../../protocol/errors.js';
import { DAY_MS, offerBy, template } from '../support/offers.js';
import { partyKey, T0, usdc } from '../support/pacts.js';

const seller = partyKey(1);
const buyer = partyKey(2);
const other = partyKey(3);

const published = (fields: Record<string, unknown> = {}): Offer => {
  const signed = offerBy(seller, T0, fields);
  return publishedOffer(offerIdOf(signed), signed, T0);
};
const acceptance = (signer = buyer, acceptanceId = 'a1', offer = published()) => ({
  signer: signer.party,
  acceptanceId,
  pactId: acceptedPactId(offer.offerId, signer.party, acceptanceId),
});
const statusOf = (error: { error: keyof typeof ERROR_STATUS } | undefined) => (error ? ERROR_STATUS[error.error] : undefined);

test('an offer id comes from what its signature covers: the same offer names the same id, another offer another', () => {
  const a = offerBy(seller, T0);
  assert.match(offerIdOf(a), /^o_[0-9a-f]{32}$/);
  assert.is(offerIdOf({ ...a, sig: '0'.repeat(128) }), offerIdOf(a));
  assert.is.not(offerIdOf(offerBy(seller, T0, { text: 'another' })), offerIdOf(a));
});

test('an acceptance names one pact per (offer, signer, acceptanceId)', () => {
  const id = acceptedPactId('o_1', buyer.party, 'a1');
  assert.match(id, /^p_[0-9a-f]{32}$/);
  assert.is(acceptedPactId('o_1', buyer.party, 'a1'), id);
  assert.is.not(acceptedPactId('o_1', buyer.party, 'a2'), id);
  assert.is.not(acceptedPactId('o_1', other.party, 'a1'), id);
  assert.is.not(acceptedPactId('o_2', buyer.party, 'a1'), id);
});

test('the pact of an acceptance: the buyer pays the price and its bond, the seller posts its bond and proposes', () => {
  const offer = published({ template: template({ windows: { perform: 3_600_000 } }) });
  const spec = pactSpecOf(offer.offerId, offer, buyer.party);
  assert.equal(spec.parties, [
    { party: seller.party, deposit: usdc(0), bond: usdc(50), required: true },
    { party: buyer.party, deposit: usdc(1001), bond: usdc(75), required: true },
  ]);
  assert.is(spec.proposer, seller.party);
  assert.is(spec.groupId, offer.offerId);
  assert.equal(spec.windows, { perform: 3_600_000 });
  assert.equal(spec.terms, template().terms);
  assert.is(spec.minParties, 2);
  assert.is(specProblem(spec), undefined);
});

test('shape: exactly one of pactId and template; one asset; terms within the pact limit', () => {
  const pactOffer = offerBy(seller, T0, { pactId: `p_${'a'.repeat(32)}` });
  assert.is(offerShapeProblem(pactOffer), undefined);
  assert.is(offerShapeProblem(offerBy(seller, T0)), undefined);
  const both = { ...offerBy(seller, T0), pactId: `p_${'a'.repeat(32)}` } as SignedOffer;
  const neither = { ...offerBy(seller, T0), template: undefined } as SignedOffer;
  for (const offer of [both, neither]) assert.is(offerShapeProblem(offer)?.error, 'invalid_request');
  const mixed = offerBy(seller, T0, { template: template({ buyerBond: { amount: '1', asset: 'EURC' } }) });
  assert.is(offerShapeProblem(mixed)?.error, 'invalid_request');
  const huge = offerBy(seller, T0, { template: template({ terms: { spec: 'x'.repeat(65_536), more: 'y' } }) });
  assert.is(offerShapeProblem(huge)?.error, 'too_large');
});

test('time: an offer expires after now and at most 30 days ahead (422)', () => {
  assert.is(offerTimeProblem(offerBy(seller, T0, { expiresAt: T0 + 1 }), T0), undefined);
  assert.is(offerTimeProblem(offerBy(seller, T0, { expiresAt: T0 + MAX_OFFER_LIFETIME_MS }), T0), undefined);
  for (const expiresAt of [T0, T0 - 1, T0 + MAX_OFFER_LIFETIME_MS + 1]) {
    const problem = offerTimeProblem(offerBy(seller, T0, { expiresAt }), T0);
    assert.is(problem?.error, 'expiresAt_out_of_range');
    assert.is(statusOf(problem), 422);
  }
});

test('refusals, in order: an offer of a pact (409), the publisher itself (403), expired (410), sold out (409)', () => {
  const pactOffer = published({ pactId: `p_${'a'.repeat(32)}` });
  assert.is(acceptanceRefusal(pactOffer, seller.party, T0 + DAY_MS)?.error, 'offer_not_acceptable');
  const offer = published();
  assert.is(acceptanceRefusal(offer, buyer.party, T0), undefined);
  assert.is(acceptanceRefusal(offer, seller.party, T0 + DAY_MS)?.error, 'forbidden');
  const expired = acceptanceRefusal(offer, buyer.party, offer.expiresAt);
  assert.is(expired?.error, 'offer_expired');
  assert.is(statusOf(expired), 410);
  assert.is(acceptanceRefusal(offer, buyer.party, offer.expiresAt - 1), undefined);
  const soldOut = afterAcceptance(offer, acceptance(buyer, 'a1', offer), T0 + 1)!;
  assert.is(acceptanceRefusal(soldOut, buyer.party, soldOut.expiresAt)?.error, 'offer_expired');
  assert.is(acceptanceRefusal(soldOut, other.party, T0 + 2)?.error, 'sold_out');
});

test('each acceptance takes one unit; the last leaves the offer SOLD_OUT; the machine refuses one more', () => {
  let offer = published({ inventory: 3 });
  assert.is(offer.remaining, 3);
  assert.is(offer.state, 'OPEN');
  for (const [i, key] of [buyer, other, partyKey(4)].entries()) {
    offer = afterAcceptance(offer, acceptance(key, 'a', offer), T0 + i)!;
    assert.is(offer.remaining, 2 - i);
    assert.is(entriesAfterPublication(offer), i + 1);
  }
  assert.is(offer.state, 'SOLD_OUT');
  assert.is(afterAcceptance(offer, acceptance(partyKey(5), 'a', offer), T0 + 9), undefined);
  assert.is(published().remaining, 1, 'inventory defaults to 1');
});

test('a unit given back opens a sold-out offer again; the next acceptance takes it', () => {
  const offer = published();
  const soldOut = afterAcceptance(offer, acceptance(buyer, 'a1', offer), T0 + 1)!;
  const reopened = afterRelease(soldOut, acceptance(buyer, 'a1', offer).pactId, T0 + 2)!;
  assert.is(reopened.state, 'OPEN');
  assert.is(reopened.remaining, 1);
  assert.is(reopened.released, 1);
  assert.is(entriesAfterPublication(reopened), 2);
  const again = afterAcceptance(reopened, acceptance(other, 'a1', offer), T0 + 3)!;
  assert.is(again.state, 'SOLD_OUT');
  assert.is(entriesAfterPublication(again), 3);
});

test('a pact gives its unit back only when cancelled at its fund deadline, and only to its own offer', () => {
  const base = { sourceOffer: { id: 'o_1', by: seller.party }, state: 'CANCELLED', settlement: { outcome: 'cancelled_fund_deadline' } } as unknown as Pact;
  assert.ok(releasesUnit(base, 'o_1'));
  assert.not.ok(releasesUnit(base, 'o_2'));
  assert.not.ok(releasesUnit({ ...base, settlement: { outcome: 'cancelled_perform_deadline' } } as Pact, 'o_1'));
  assert.not.ok(releasesUnit({ ...base, state: 'CREATED', settlement: null } as Pact, 'o_1'));
  assert.not.ok(releasesUnit({ ...base, sourceOffer: null } as Pact, 'o_1'));
});

test('the record shows the signed offer as sent, plus what the service added', () => {
  const signed = offerBy(seller, T0, { inventory: 2 });
  const offer = publishedOffer(offerIdOf(signed), signed, T0 + 5);
  assert.equal(signedOfferOf(offer), signed);
  assert.is(offer.publishedAt, T0 + 5);
  assert.is(offer.by, seller.party);
});

test('replay: a publication then acceptances rebuild the offer; anything out of place is refused', () => {
  const signed = offerBy(seller, T0, { inventory: 2 });
  const offerId = offerIdOf(signed);
  const envelope = { action: 'offers.accept', call: { acceptanceId: 'a1' }, pactId: offerId, stateNonce: 0, issuedAt: T0, signer: buyer.party, sig: '' } as const;
  const publication: OfferEntry = { offerId, nonce: 0, event: { type: 'published', at: T0, offer: signed } };
  const first: OfferEntry = { offerId, nonce: 1, event: { type: 'accepted', at: T0 + 1, ...acceptance(buyer, 'a1', publishedOffer(offerId, signed, T0)) }, envelope };
  const offer = applyOfferEntry(applyOfferEntry(undefined, publication), first);
  assert.is(offer.remaining, 1);
  const throws = (fn: () => unknown) => assert.throws(fn, (error: unknown) => error instanceof JournalReplayError);
  throws(() => applyOfferEntry(offer, publication));
  throws(() => applyOfferEntry(undefined, first));
  throws(() => applyOfferEntry(offer, { ...first, nonce: 1 }));
  throws(() => applyOfferEntry(undefined, { ...publication, offerId: 'o_other' }));
});

test.run();
