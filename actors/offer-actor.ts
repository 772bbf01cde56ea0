import { afterAcceptance, afterRelease, entriesAfterPublication, publishedOffer } from '../machines/offer/evolve.js';
import { acceptanceRefusal, acceptedPactId } from '../machines/offer/rules.js';
import type { AcceptCall, Offer, SignedOffer } from '../machines/offer/types.js';
import { pactError, type PactError } from '../protocol/errors.js';
import type { OfferRecord } from '../projection/offer-read-model.js';
import { applyOfferEntry, type OfferEntry, type OfferJournal } from './offer-journal.js';
import { ExpectedSequenceMismatch } from './stream-journal.js';

/** The node's records of offers (its read model), which an offer actor comes back from. */
export interface OfferRecords {
  record(offerId: string): Promise<OfferRecord | undefined>;
  hasAcceptance(offerId: string, pactId: string): Promise<boolean>;
  hasRelease(offerId: string, pactId: string): Promise<boolean>;
}

export interface OfferActorDeps {
  journal: OfferJournal;
  records: OfferRecords;
}

export type Failure = { ok: false; error: PactError };
export type Published = { ok: true; offer: Offer; seq: number } | Failure;
export type Accepted = { ok: true; offer: Offer; pactId: string } | Failure;
export type Released = { ok: true; offer: Offer } | Failure;

/** Appends lost to other writers in a row before a command gives up (503): only a hot offer on many nodes gets near it. */
const MAX_APPENDS = 8;

const failure = (error: PactError): Failure => ({ ok: false, error });

/**
 * The writer of one offer in this process. Any node may append to an offer's journal; the append's
 * compare-and-set on the offer's last sequence makes the journal the arbiter, so an acceptance is recorded
 * once and the inventory never goes below zero, however many nodes accept at once. An actor comes back from
 * the node's record of its offer, which may lag: an append on it fails its compare-and-set, and the actor
 * then reads the journal and decides again. A refusal (sold out, expired) is decided only on what the journal
 * says now, so a retried acceptance that another node recorded is answered with its pact, not refused.
 */
export class OfferActor {
  /** Acceptances and releases (by pact id) this actor appended or read from the journal past its record. */
  private readonly accepted = new Set<string>();
  private readonly released = new Set<string>();

  private constructor(
    readonly offerId: string,
    private readonly deps: OfferActorDeps,
    private offer: Offer | undefined,
    private seq: number,
  ) {}

  static async load(offerId: string, deps: OfferActorDeps): Promise<OfferActor> {
    const record = await deps.records.record(offerId);
    return new OfferActor(offerId, deps, record?.offer, record?.seq ?? 0);
  }

  /** Publishes the offer, or answers with it when it is published already (the same signed offer). */
  async publish(signed: SignedOffer, now: number): Promise<Published> {
    for (let append = 1; !this.offer; append++) {
      const entry: OfferEntry = { offerId: this.offerId, nonce: 0, event: { type: 'published', at: now, offer: signed } };
      await this.append(entry, publishedOffer(this.offerId, signed, now), append);
    }
    return { ok: true, offer: this.offer, seq: this.seq };
  }

  /** Records one acceptance, or answers with its pact when the journal holds it already. */
  async accept(envelope: AcceptCall, now: number): Promise<Accepted> {
    const { signer } = envelope;
    const { acceptanceId } = envelope.call;
    const pactId = acceptedPactId(this.offerId, signer, acceptanceId);
    let fresh = false; // whether the actor has read the journal during this command
    for (let append = 1; ; append++) {
      if (!this.offer && !fresh) fresh = await this.confirm();
      const offer = this.offer;
      if (!offer) return failure(pactError('not_found', `no offer ${this.offerId}`));
      if (await this.hasAccepted(pactId)) return { ok: true, offer, pactId };
      const refused = acceptanceRefusal(offer, signer, now);
      if (refused && !fresh) {
        fresh = await this.confirm();
        continue;
      }
      if (refused) return failure(refused);
      const next = afterAcceptance(offer, { signer, acceptanceId, pactId }, now)!;
      const entry: OfferEntry = {
        offerId: this.offerId,
        nonce: entriesAfterPublication(next),
        event: { type: 'accepted', at: now, signer, acceptanceId, pactId },
        envelope,
      };
      if (await this.append(entry, next, append)) {
        this.accepted.add(pactId);
        return { ok: true, offer: next, pactId };
      }
      fresh = true;
    }
  }

  /**
   * Gives back the unit of the acceptance that made `pactId` (its pact was cancelled unfunded), once: a
   * second release of it answers with the offer as it is.
   */
  async release(pactId: string, now: number): Promise<Released> {
    let fresh = false;
    for (let append = 1; ; append++) {
      if (!this.offer && !fresh) fresh = await this.confirm();
      const offer = this.offer;
      if (!offer) return failure(pactError('not_found', `no offer ${this.offerId}`));
      if (await this.hasReleased(pactId)) return { ok: true, offer };
      if (!(await this.hasAccepted(pactId))) {
        if (fresh) return failure(pactError('not_found', `no acceptance of offer ${this.offerId} made pact ${pactId}`));
        fresh = await this.confirm();
        continue;
      }
      const next = afterRelease(offer, pactId, now)!;
      const entry: OfferEntry = { offerId: this.offerId, nonce: entriesAfterPublication(next), event: { type: 'released', at: now, pactId } };
      if (await this.append(entry, next, append)) {
        this.released.add(pactId);
        return { ok: true, offer: next };
      }
      fresh = true;
    }
  }

  private async hasReleased(pactId: string): Promise<boolean> {
    return this.released.has(pactId) || (await this.deps.records.hasRelease(this.offerId, pactId));
  }

  private async hasAccepted(pactId: string): Promise<boolean> {
    return this.accepted.has(pactId) || (await this.deps.records.hasAcceptance(this.offerId, pactId));
  }

  /**
   * Appends `entry` on the offer's last known sequence and adopts `next`; true when it did. When another
   * writer got there first, reads what it wrote instead (false), up to MAX_APPENDS times.
   */
  private async append(entry: OfferEntry, next: Offer, attempt: number): Promise<boolean> {
    try {
      this.seq = await this.deps.journal.append(entry, this.seq);
      this.offer = next;
      return true;
    } catch (error) {
      if (!(error instanceof ExpectedSequenceMismatch) || attempt >= MAX_APPENDS) throw error;
      await this.confirm();
      return false;
    }
  }

  /** Reads the journal's entries newer than what the actor holds; resolves to true. */
  private async confirm(): Promise<true> {
    for (const { seq, value } of await this.deps.journal.entriesAfter(this.offerId, this.seq)) {
      this.offer = applyOfferEntry(this.offer, value);
      this.seq = seq;
      if (value.event.type === 'accepted') this.accepted.add(value.event.pactId);
      if (value.event.type === 'released') this.released.add(value.event.pactId);
    }
    return true;
  }
}
