import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from './acked-publisher.js';
import { afterAcceptance, afterRelease, entriesAfterPublication, publishedOffer } from '../machines/offer/evolve.js';
import { offerIdOf } from '../machines/offer/rules.js';
import type { AcceptCall, Offer, OfferEvent } from '../machines/offer/types.js';
import { JournalReplayError } from './replay.js';
import { messageObject, StreamJournal } from './stream-journal.js';
import { OFFER_STREAM, offerSubject } from './subjects.js';

/**
 * One entry of an offer's journal: its publication (nonce 0, the signed offer inside the event), one
 * acceptance (with the accepter's signed call), or a unit given back by an acceptance whose pact was
 * cancelled unfunded (the pact's own journal shows why). Anyone can re-verify an offer and its acceptances.
 */
export interface OfferEntry {
  offerId: string;
  /** Entries of the offer before this one. */
  nonce: number;
  event: OfferEvent;
  envelope?: AcceptCall;
}

/** The entry in a message on `subject`; undefined for a message that is not an entry of that subject's offer. */
export function decodeOfferEntry(data: Uint8Array, subject: string): OfferEntry | undefined {
  const value = messageObject<OfferEntry>(data);
  const wellShaped =
    value !== undefined &&
    typeof value.offerId === 'string' && offerSubject(value.offerId) === subject &&
    Number.isSafeInteger(value.nonce) && value.nonce! >= 0 &&
    typeof value.event === 'object' && value.event !== null && typeof value.event.at === 'number' &&
    (value.event.type === 'published' || value.event.type === 'released' ||
      (value.event.type === 'accepted' && typeof value.envelope === 'object' && value.envelope !== null));
  return wellShaped ? (value as OfferEntry) : undefined;
}

/** The offers' journal: a publication's message id is the offer's, an acceptance's or a release's names its pact. */
export class OfferJournal extends StreamJournal<OfferEntry> {
  constructor(publisher: Publisher, jsm: JetStreamManager) {
    super(publisher, jsm, {
      stream: OFFER_STREAM,
      subjectOf: offerSubject,
      idOf: (entry) => entry.offerId,
      messageIdOf: ({ offerId, event }) => (event.type === 'published' ? `${offerId}:published` : `${offerId}:${event.type}:${event.pactId}`),
      decode: decodeOfferEntry,
    });
  }
}

/**
 * The offer after `entry`: its record for the publication, else the previous offer with the acceptance
 * replayed through the machine. An entry that does not fit (a second publication, an acceptance past the
 * inventory, another nonce) is a journal this code cannot trust: it throws rather than guess.
 */
export function applyOfferEntry(offer: Offer | undefined, entry: OfferEntry): Offer {
  const at = `${entry.offerId} nonce ${entry.nonce}`;
  const { event } = entry;
  if (event.type === 'published') {
    if (offer) throw new JournalReplayError(`${at}: a second publication`);
    if (entry.nonce !== 0 || offerIdOf(event.offer) !== entry.offerId) throw new JournalReplayError(`${at}: not the offer's publication`);
    return publishedOffer(entry.offerId, event.offer, event.at);
  }
  if (!offer) throw new JournalReplayError(`${at}: an ${event.type} entry before the publication`);
  const next = event.type === 'accepted'
    ? afterAcceptance(offer, { signer: event.signer, acceptanceId: event.acceptanceId, pactId: event.pactId }, event.at)
    : afterRelease(offer, event.pactId, event.at);
  if (!next) throw new JournalReplayError(`${at}: the machine refuses the ${event.type} entry`);
  if (entriesAfterPublication(next) !== entry.nonce) throw new JournalReplayError(`${at}: replay reaches nonce ${entriesAfterPublication(next)}`);
  return next;
}
