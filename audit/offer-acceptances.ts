import type { OfferJournal } from '../actors/offer-journal.js';
import type { JournalAudit } from './journal-audit.js';

/**
 * A pact made by an offer acceptance holds only if the offer's journal recorded that acceptance: it took
 * a unit there, before the pact was made. Each offer's journal is read once.
 */
export async function checkOfferAcceptances(audit: JournalAudit, offers: OfferJournal): Promise<void> {
  const accepted = new Map<string, Set<string>>();
  for (const { pactId, offerId } of audit.offerPacts()) {
    let pacts = accepted.get(offerId);
    if (!pacts) {
      const entries = await offers.entriesAfter(offerId, 0);
      pacts = new Set(entries.flatMap(({ value: { event } }) => (event.type === 'accepted' ? [event.pactId] : [])));
      accepted.set(offerId, pacts);
    }
    if (!pacts.has(pactId)) audit.fail(pactId, `offer ${offerId}'s journal records no acceptance that makes this pact`);
  }
}
