import { nextSnapshot } from '../next-snapshot.js';
import { offerMachine } from './machine.js';
import type { Acceptance, Offer, OfferEvent, SignedOffer } from './types.js';

/** The record of a newly published offer. */
export function publishedOffer(offerId: string, offer: SignedOffer, at: number): Offer {
  const inventory = offer.inventory ?? 1;
  return { ...offer, offerId, publishedAt: at, listedAt: at, remaining: inventory, released: 0, state: 'OPEN' };
}

/** The offer after `event`, or undefined when the machine refuses it (an acceptance when sold out). */
function evolveOffer(offer: Offer, event: Exclude<OfferEvent, { type: 'published' }>): Offer | undefined {
  const snapshot = offerMachine.resolveState({ value: offer.state, context: offer });
  const next = nextSnapshot(offerMachine, snapshot, event);
  return next.context.remaining === offer.remaining ? undefined : { ...next.context, state: next.value as Offer['state'] };
}

export const afterAcceptance = (offer: Offer, acceptance: Acceptance, at: number) => evolveOffer(offer, { type: 'accepted', at, ...acceptance });

export const afterRelease = (offer: Offer, pactId: string, at: number) => evolveOffer(offer, { type: 'released', at, pactId });

/** How many entries the offer's journal holds after its publication: acceptances and releases. */
export const entriesAfterPublication = (offer: Offer) => (offer.inventory ?? 1) - offer.remaining + 2 * offer.released;
