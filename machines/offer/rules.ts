import { canonicalDigest } from '../../protocol/digest.js';
import { pactError, type PactError } from '../../protocol/errors.js';
import type { PartyId } from '../../protocol/party.js';
import { signedPart } from '../../protocol/signed-call.js';
import { oversizedPart } from '../pact/limits.js';
import type { PactSpec } from '../pact/spec.js';
import type { Pact } from '../pact/types.js';
import type { Offer, SignedOffer } from './types.js';

/** How far ahead an offer may expire. */
export const MAX_OFFER_LIFETIME_MS = 30 * 86_400_000;
export const MAX_INVENTORY = 10_000;

const idOf = (prefix: string, value: unknown) =>
  `${prefix}${Buffer.from(canonicalDigest(value).subarray(0, 16)).toString('hex')}`;

/** An offer's id: from the digest its signature covers, so publishing the same offer again names the same one. */
export const offerIdOf = (offer: SignedOffer) => idOf('o_', signedPart(offer));

/**
 * The pact an acceptance creates: one per (offer, signer, acceptanceId), so a retried acceptance names the
 * same pact. The `acceptance` wrapper keeps these ids apart from those of signed create calls.
 */
export const acceptedPactId = (offerId: string, signer: PartyId, acceptanceId: string) =>
  idOf('p_', { acceptance: { offerId, signer, acceptanceId } });

/** The create spec of the pact an acceptance of a template offer makes (DECISIONS.md, Offers). */
export function pactSpecOf(offerId: string, offer: SignedOffer, buyer: PartyId): PactSpec {
  const template = offer.template!;
  return {
    rail: template.rail,
    parties: [
      { party: offer.by, deposit: { amount: '0', asset: template.price.asset }, bond: template.sellerBond, required: true },
      { party: buyer, deposit: template.price, bond: template.buyerBond, required: true },
    ],
    proposer: offer.by,
    terms: template.terms,
    minParties: 2,
    ...(template.windows ? { windows: template.windows } : {}),
    groupId: offerId,
  };
}

/** Rules of an offer's shape that its schema cannot say (400, 413). */
export function offerShapeProblem(offer: SignedOffer): PactError | undefined {
  if ((offer.pactId === undefined) === (offer.template === undefined)) {
    return pactError('invalid_request', 'an offer names exactly one of pactId and template', { field: 'template' });
  }
  const template = offer.template;
  if (!template) return undefined;
  const assets = new Set([template.price.asset, template.buyerBond.asset, template.sellerBond.asset]);
  if (assets.size !== 1) return pactError('invalid_request', 'the price and both bonds are in one asset', { field: 'template' });
  const oversized = oversizedPart('pacts.create', template);
  return oversized ? pactError('too_large', `template.terms is larger than ${oversized.limit} bytes`, { field: 'template.terms', limit: oversized.limit }) : undefined;
}

/** An offer may be published until it expires, and at most 30 days ahead of `now` (422). */
export function offerTimeProblem(offer: SignedOffer, now: number): PactError | undefined {
  if (offer.expiresAt <= now) return pactError('expiresAt_out_of_range', 'expiresAt has passed', { field: 'expiresAt', now });
  if (offer.expiresAt > now + MAX_OFFER_LIFETIME_MS) {
    return pactError('expiresAt_out_of_range', 'expiresAt is more than 30 days ahead', { field: 'expiresAt', now });
  }
  return undefined;
}

export const isExpired = (offer: Pick<Offer, 'expiresAt'>, now: number) => now >= offer.expiresAt;

/**
 * Why a new acceptance of `offer` by `signer` at `now` is refused, in this order: an offer of an existing
 * pact takes no acceptance (its pact is joined by funding), the publisher cannot buy from itself, an expired
 * offer, a sold-out one. A repeated acceptance is not judged here: it is answered with its pact.
 */
export function acceptanceRefusal(offer: Offer, signer: PartyId, now: number): PactError | undefined {
  if (offer.template === undefined) {
    return pactError('offer_not_acceptable', `offer ${offer.offerId} names pact ${offer.pactId}: join it by funding that pact`, {
      pactId: offer.pactId,
    });
  }
  if (signer === offer.by) return pactError('forbidden', 'the publisher of an offer cannot accept it');
  if (isExpired(offer, now)) return pactError('offer_expired', 'the offer has expired', { expiresAt: offer.expiresAt });
  if (offer.state === 'SOLD_OUT') return pactError('sold_out', 'the offer has no inventory left');
  return undefined;
}

/** The offer as its publisher signed it: the record without what the service added. */
export function signedOfferOf(offer: Offer): SignedOffer {
  const { offerId: _id, publishedAt: _at, listedAt: _listed, remaining: _remaining, released: _released, state: _state, ...signed } = offer;
  return signed;
}

/**
 * Whether a pact gives its offer's unit back: one created by an acceptance of that offer, cancelled at its
 * fund deadline (nobody funded it in time, or not everyone did). A pact that ever activated keeps its unit.
 */
export const releasesUnit = (pact: Pact, offerId: string) =>
  pact.sourceOffer?.id === offerId && pact.state === 'CANCELLED' && pact.settlement?.outcome === 'cancelled_fund_deadline';
