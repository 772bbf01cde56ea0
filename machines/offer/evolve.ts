import { transition } from 'xstate';
import { offerMachine } from './machine.js';
import type { Acceptance, Offer, SignedOffer } from './types.js';

/** The record of a newly published offer. */
export function publishedOffer(offerId: string, offer: SignedOffer, at: number): Offer {
  const inventory = offer.inventory ?? 1;
  return { ...offer, offerId, publishedAt: at, listedAt: at, remaining: inventory, state: 'OPEN' };
}

/** The offer after one acceptance, or undefined when the machine refuses it (sold out). */
export function afterAcceptance(offer: Offer, acceptance: Acceptance, at: number): Offer | undefined {
  const snapshot = offerMachine.resolveState({ value: offer.state, context: offer });
  const [next] = transition(offerMachine, snapshot, { type: 'accepted', at, ...acceptance });
  return next.context.remaining === offer.remaining ? undefined : { ...next.context, state: next.value as Offer['state'] };
}
