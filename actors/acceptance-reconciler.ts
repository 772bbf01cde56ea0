import type { Pact } from '../machines/pact/types.js';
import { releasesUnit } from '../machines/offer/rules.js';
import type { PactError } from '../protocol/errors.js';
import type { OfferReadModel, UnfinishedAcceptance } from '../projection/offer-read-model.js';
import type { Clock } from '../runtime/clock.js';
import type { OfferDesk } from './offer-desk.js';
import { PeriodicPass } from './periodic-pass.js';

/** How long an acceptance may wait for its pact before the reconciler creates it: its own request does first. */
const GRACE_MS = 30_000;

/**
 * Finishes acceptances. One whose pact was never created (the offer's journal took the acceptance, and the
 * process died, or the pact's host did not answer, before the pact was) gets its pact: creating a pact is
 * idempotent by its id, so a reconciler on every node, and the accepter's own retry, may all try; one pact
 * results. One whose pact was cancelled at its fund deadline unfunded gives its unit back to the offer
 * (once: the offer's journal says whether it did), so that accepting without paying cannot sell an offer out
 * for good. Runs at start and every minute on every node, and from `/__test/clock`.
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

  /** One pass; resolves to the number of pacts it created or units it gave back. */
  protected async pass(): Promise<number> {
    let done = 0;
    for await (const acceptance of this.offers.unfinishedAcceptances()) {
      const pact = await this.pactOf(acceptance.pactId);
      if (!pact) {
        // A pact just created is followed on, like any other in CREATED: it may yet be cancelled unfunded.
        const created = await this.create(acceptance);
        if (created === 'done') done++;
        if (created === 'nothing to do') await this.offers.finished(acceptance.pactId);
        continue;
      }
      const settled = await this.settle(acceptance, pact);
      if (settled === 'done') done++;
      if (settled !== 'not yet') await this.offers.finished(acceptance.pactId);
    }
    return done;
  }

  /** A pact still in CREATED may yet be cancelled unfunded; one cancelled so gives its unit back. */
  private async settle(acceptance: UnfinishedAcceptance, pact: Pact): Promise<Outcome> {
    if (pact.state === 'CREATED') return 'not yet';
    if (!releasesUnit(pact, acceptance.offerId)) return 'nothing to do';
    return outcomeOf(await this.desk.release(acceptance.offerId, acceptance.pactId), `giving back the unit of ${acceptance.pactId}`);
  }

  /** The pact of an acceptance at least GRACE_MS old that nobody created. */
  private async create(acceptance: UnfinishedAcceptance): Promise<Outcome> {
    const offer = this.clock.now() - acceptance.at >= GRACE_MS ? await this.offers.get(acceptance.offerId) : undefined;
    if (!offer) return 'not yet';
    return outcomeOf(await this.desk.createPact(acceptance.pactId, offer, acceptance.envelope), `creating the pact of acceptance ${acceptance.pactId}`);
  }
}

type Outcome = 'done' | 'nothing to do' | 'not yet';

/**
 * `unavailable` is tried again next pass; any other refusal is final (a forged acceptance in the journal
 * makes no pact, ever) and is logged and left.
 */
function outcomeOf(reply: { ok: true } | { ok: false; error: PactError }, what: string): Outcome {
  if (reply.ok) return 'done';
  if (reply.error.error === 'unavailable') {
    console.error(`${what} failed for now; the next pass tries again`);
    return 'not yet';
  }
  console.error(`${what} is refused (${reply.error.error}: ${reply.error.message}); left as it is`);
  return 'nothing to do';
}
