import type { Money } from '../../protocol/money.js';
import type { PartyId } from '../../protocol/party.js';
import type { SignedCall } from '../../protocol/signed-call.js';
import type { RailName, Windows } from '../pact/types.js';

/** What an offer's accepter gets: a pact with these terms, the accepter paying `price` as the buyer. */
export interface OfferTemplate {
  rail: RailName;
  price: Money;
  buyerBond: Money;
  sellerBond: Money;
  terms: { spec: string } & Record<string, unknown>;
  windows?: Partial<Windows>;
}

/** `POST /offers` as the publisher signs it: `sig` covers every other field, exactly as sent. */
export interface SignedOffer {
  by: PartyId;
  tags: string[];
  text: string;
  expiresAt: number;
  /** Exactly one of `pactId` (an existing pact to join by funding) and `template` (a pact per acceptance). */
  pactId?: string;
  template?: OfferTemplate;
  /** How many acceptances the template offer takes; 1 when left out. */
  inventory?: number;
  sig: string;
}

/**
 * An offer as the service keeps and shows it: the signed fields as sent, plus its id, when it was published
 * and how many acceptances it still takes. Expiry is a matter of time, not of state: an offer past
 * `expiresAt` is refused and hidden, whatever its state says.
 */
export type Offer = SignedOffer & {
  offerId: string;
  /** When the desk that took it published it, on that node's clock. */
  publishedAt: number;
  /**
   * Its place in the listing, the time search's `since` and `nextSince` speak of: `publishedAt`, but never
   * before or at an offer listed ahead of it in the journal. Offers published at once on several nodes (or
   * clocks a little apart) reach the journal in some order; listed in that order, an offer never appears
   * behind a cursor already handed out.
   */
  listedAt: number;
  /** Units left: the inventory, less acceptances, plus units given back. */
  remaining: number;
  /** Units given back by acceptances whose pact was cancelled unfunded at its fund deadline. */
  released: number;
  state: OfferState;
};

export const OFFER_STATES = ['OPEN', 'SOLD_OUT'] as const;
export type OfferState = (typeof OFFER_STATES)[number];

/** One acceptance: who accepted, under which id of theirs, and the pact it leads to. */
export interface Acceptance {
  signer: PartyId;
  acceptanceId: string;
  pactId: string;
}

export type OfferEvent =
  | { type: 'published'; at: number; offer: SignedOffer }
  | ({ type: 'accepted'; at: number } & Acceptance)
  /** The pact of an acceptance was cancelled at its fund deadline without being funded: its unit comes back. */
  | { type: 'released'; at: number; pactId: string };

/** `POST /offers/:offerId/accept` once its signature is checked. */
export type AcceptCall = SignedCall<{ acceptanceId: string }>;
