import type { Nats } from '../actors/nats.js';
import { applyOfferEntry, decodeOfferEntry } from '../actors/offer-journal.js';
import { OFFER_STREAM } from '../actors/subjects.js';
import type { Offer } from '../machines/offer/types.js';
import { BatchedFollower, type Afterwards } from './batched-follower.js';
import type { JournalMessage } from './journal-follower.js';
import type { Checkpoint, OfferReadModel, OfferRecord, UnfinishedAcceptance } from './offer-read-model.js';

/**
 * Keeps the offers' read model from their journal, in stream order and in batches. Every node keeps its
 * own, so every node learns of an offer published anywhere: that is what wakes its watchers. It lists
 * offers in journal order (`Offer.listedAt`), the same on every node, since all read the same journal.
 */
export class OfferProjector {
  private readonly feed: BatchedFollower;
  private readonly listeners: ((offer: Offer) => void)[] = [];
  /** The `listedAt` of the last offer written. */
  private listedAt = 0;

  constructor(
    private readonly nats: Nats,
    private readonly readModel: OfferReadModel,
    nodeId: string,
  ) {
    this.feed = new BatchedFollower(nats, {
      stream: OFFER_STREAM,
      consumerName: `offer-projector-${nodeId}`,
      what: 'the offer projector',
      write: (batch) => this.write(batch),
    });
  }

  /** Told of each offer listed (published, or open again after being sold out), once its record is written here. */
  onListed(listener: (offer: Offer) => void): void {
    this.listeners.push(listener);
  }

  /** Catches up with the offers' journal, then keeps following it. */
  async start(): Promise<void> {
    await this.readModel.open((await this.nats.jsm.streams.info(OFFER_STREAM)).created);
    const { seq, listedAt } = await this.readModel.checkpoint();
    this.listedAt = listedAt;
    await this.feed.start(seq);
  }

  stop(): Promise<void> {
    return this.feed.stop();
  }

  /** Resolves once the read model holds journal position `seq`, or after `timeoutMs` when one is given. */
  reached(seq: number, timeoutMs?: number): Promise<void> {
    return this.feed.reached(seq, timeoutMs);
  }

  /** Writes one batch of the offers' journal; the watchers are told what it listed once it is reached. */
  private async write(batch: JournalMessage[]): Promise<Afterwards> {
    const written = await this.recordsOf(batch);
    await this.readModel.putAll(written.records, written.accepted, written.reached, written.released);
    this.listedAt = written.reached.listedAt;
    return () => {
      for (const offer of written.listed) for (const listener of this.listeners) listener(offer);
    };
  }

  /**
   * The newest record of each offer the batch moves, the acceptances and releases it records, and the
   * offers it lists. An entry that cannot be replayed is logged and left out (the offer keeps its last good record).
   */
  private async recordsOf(batch: JournalMessage[]) {
    const latest = new Map<string, OfferRecord>();
    const accepted: UnfinishedAcceptance[] = [];
    const listed: Offer[] = [];
    const released: { offerId: string; pactId: string }[] = [];
    let { listedAt } = this;
    for (const message of batch) {
      const entry = decodeOfferEntry(message.data, message.subject);
      if (!entry) {
        console.error(`offer projector skips message ${message.seq}: not an entry of its subject’s offer`);
        continue;
      }
      const previous = latest.get(entry.offerId) ?? (await this.readModel.record(entry.offerId));
      if (previous && previous.seq >= message.seq) continue; // written before a restart
      try {
        let offer = applyOfferEntry(previous?.offer, entry);
        const { event } = entry;
        // A new offer, or a sold-out one open again (a unit given back), is listed after everything listed so far.
        if (event.type === 'published' || (event.type === 'released' && previous?.offer.state === 'SOLD_OUT')) {
          listedAt = Math.max(event.at, listedAt + 1);
          offer = { ...offer, listedAt };
          listed.push(offer);
        }
        if (event.type === 'accepted') accepted.push({ pactId: event.pactId, offerId: entry.offerId, envelope: entry.envelope!, at: event.at });
        if (event.type === 'released') released.push({ offerId: entry.offerId, pactId: event.pactId });
        latest.set(entry.offerId, { offer, seq: message.seq });
      } catch (error) {
        console.error('offer projector skips an entry it cannot replay:', String(error));
      }
    }
    const reached: Checkpoint = { seq: batch.at(-1)!.seq, listedAt };
    return { records: [...latest.values()], accepted, released, listed, reached };
  }
}
