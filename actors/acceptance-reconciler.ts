import type { Pact } from '../machines/pact/types.js';
import type { OfferReadModel } from '../projection/offer-read-model.js';
import type { Clock } from '../runtime/clock.js';
import type { OfferDesk } from './offer-desk.js';
import { PeriodicPass } from './periodic-pass.js';

/** How long an acceptance may wait for its pact before the reconciler creates it: its own request does first. */
const GRACE_MS = 30_000;

/**
 * Finishes acceptances whose pact was never created: the offer's journal took the acceptance, and the
 * process died (or the pact's host did not answer) before the pact was. Creating a pact is idempotent by
 * its id, so a reconciler on every node, and the accepter's own retry, may all try; one pact results.
 */
export class AcceptanceReconciler extends PeriodicPass {
  constructor(
    private readonly offers: OfferReadModel,
    private readonly pactOf: (pactId: string) => Promise<Pact | undefined>,
    private readonly desk: OfferDesk,
    private readonly clock: Clock,
  ) {
    super('finishing acceptances');
  }

  /** One pass; resolves to the number of pacts it created. */
  protected async pass(): Promise<number> {
    let created = 0;
    for await (const acceptance of this.offers.unfinishedAcceptances()) {
      if (await this.pactOf(acceptance.pactId)) {
        await this.offers.finished(acceptance.pactId);
        continue;
      }
      const offer = this.clock.now() - acceptance.at >= GRACE_MS ? await this.offers.get(acceptance.offerId) : undefined;
      if (!offer) continue;
      const reply = await this.desk.createPact(acceptance.pactId, offer, acceptance.envelope);
      if (!reply.ok && reply.error.error === 'unavailable') {
        console.error(`the pact of acceptance ${acceptance.pactId} could not be created now; the next pass tries again`);
        continue;
      }
      // A refusal is final: the journaled acceptance does not make a pact (its signature, say), ever.
      if (!reply.ok) console.error(`the pact of acceptance ${acceptance.pactId} is refused (${reply.error.error}: ${reply.error.message}); left as it is`);
      else created++;
      await this.offers.finished(acceptance.pactId);
    }
    return created;
  }
}
