import type { AccessGate } from '../access/gate.js';
import { partyOf } from '../machines/pact/rules.js';
import type { Pact } from '../machines/pact/types.js';
import { offerIdOf, offerShapeProblem, offerTimeProblem, signedOfferOf } from '../machines/offer/rules.js';
import type { AcceptCall, Offer, SignedOffer } from '../machines/offer/types.js';
import { pactError } from '../protocol/errors.js';
import { issuedAtProblem } from '../protocol/issued-at.js';
import { signedPart } from '../protocol/signed-call.js';
import { verifySignature } from '../protocol/verify.js';
import type { Clock } from '../runtime/clock.js';
import type { CommandSender } from './command-sender.js';
import type { CommandReply } from './messages.js';
import { OfferActor, type Accepted, type Failure, type OfferActorDeps, type Published, type Released } from './offer-actor.js';

export interface OfferDeskDeps extends OfferActorDeps {
  /** The pact an offer names, as this node knows it. */
  pact(pactId: string): Promise<Pact | undefined>;
  rails: ReadonlySet<string>;
  /** Takes an accepted offer's pact to the host of its partition (as an actor host: the `accepted` kind). */
  sender: CommandSender;
  clock: Clock;
  /** Past this many offers in memory, idle ones are dropped. */
  maxActors: number;
  /** Who may publish and accept on an invite-mode server. */
  gate: AccessGate;
}

interface Live {
  actor: Promise<OfferActor> | undefined;
  queue: Promise<unknown>;
  busy: number;
}

const unavailable = (): Failure => ({ ok: false, error: pactError('unavailable', 'the offer could not be written now; read it and retry') });

/**
 * Where offers are published and accepted in this process: it checks what arrives (signatures here, with
 * node:crypto), runs each offer's commands one at a time on its actor, and creates the pact of an acceptance
 * through the pacts' command path.
 */
export class OfferDesk {
  private readonly live = new Map<string, Live>();

  constructor(private readonly deps: OfferDeskDeps) {}

  /** Publishes a signed offer (already of the schema's shape); the same offer again answers with it. */
  async publish(signed: SignedOffer): Promise<Published> {
    const now = this.deps.clock.now();
    const malformed = offerShapeProblem(signed);
    if (malformed) return { ok: false, error: malformed };
    if (!verifySignature(signed.by, signedPart(signed), signed.sig)) return { ok: false, error: pactError('invalid_signature', 'the offer signature does not verify') };
    const closed = await this.deps.gate.problem(signed.by);
    if (closed) return { ok: false, error: closed };
    const offerId = offerIdOf(signed);
    const known = await this.deps.records.record(offerId);
    if (known) return { ok: true, ...known };
    const refused = offerTimeProblem(signed, now) ?? (await this.subjectProblem(signed));
    if (refused) return { ok: false, error: refused };
    return this.inTurn(offerId, (actor) => actor.publish(signed, now));
  }

  /** Records an acceptance (a SignedCall of the route's shape, naming this offer) and creates its pact. */
  async accept(offerId: string, envelope: AcceptCall): Promise<CommandReply> {
    const now = this.deps.clock.now();
    if (envelope.stateNonce !== 0) return { ok: false, error: pactError('invalid_request', 'an acceptance takes stateNonce 0', { field: 'stateNonce' }) };
    if (!verifySignature(envelope.signer, signedPart(envelope), envelope.sig)) return { ok: false, error: pactError('invalid_signature', 'the signature does not verify') };
    const closed = await this.deps.gate.problem(envelope.signer);
    if (closed) return { ok: false, error: closed };
    const publisher = this.deps.gate.mode === 'invite' ? (await this.deps.records.record(offerId))?.offer.by : undefined; // open: nobody to turn away
    if (publisher && (await this.deps.gate.problem(publisher))) {
      return { ok: false, error: pactError('offer_not_acceptable', 'the offer’s publisher may no longer trade on this server') };
    }
    const stale = issuedAtProblem(envelope.issuedAt);
    if (stale) return { ok: false, error: stale };
    const accepted: Accepted = await this.inTurn(offerId, (actor) => actor.accept(envelope, now));
    if (!accepted.ok) return accepted;
    return this.createPact(accepted.pactId, accepted.offer, envelope);
  }

  /** Gives back the unit of the acceptance that made `pactId`, whose pact was cancelled unfunded. */
  release(offerId: string, pactId: string): Promise<Released> {
    const now = this.deps.clock.now();
    return this.inTurn(offerId, (actor) => actor.release(pactId, now));
  }

  /** Creates the pact of a recorded acceptance; creating it again answers with the pact. */
  createPact(pactId: string, offer: Offer, envelope: AcceptCall): Promise<CommandReply> {
    return this.deps.sender.send(pactId, { type: 'accepted', offer: signedOfferOf(offer), envelope });
  }

  /** What the offer is about must exist: its template's rail here, or its pact, which its publisher is a party of. */
  private async subjectProblem(signed: SignedOffer) {
    if (signed.template) {
      const { rail } = signed.template;
      return this.deps.rails.has(rail) ? undefined : pactError('rail_not_available', `rail ${rail} is not available`, { field: 'template.rail' });
    }
    const pact = await this.deps.pact(signed.pactId!);
    if (!pact) return pactError('not_found', `no pact ${signed.pactId}`);
    if (!partyOf(pact, signed.by)) return pactError('forbidden', 'only a party of the pact may offer it');
    return pact.state === 'CREATED' ? undefined : pactError('invalid_state', `pact ${pact.id} can no longer be joined`, { state: pact.state });
  }

  /** Runs `work` on the offer's actor after the offer's earlier commands; a failure is a 503 and drops the actor. */
  private inTurn<T extends { ok: boolean }>(offerId: string, work: (actor: OfferActor) => Promise<T>): Promise<T | Failure> {
    const live = this.liveActor(offerId);
    live.busy++;
    const result = live.queue.then(async () => work(await (live.actor ??= OfferActor.load(offerId, this.deps))));
    live.queue = result.catch(() => undefined).finally(() => {
      if (--live.busy === 0 && this.live.size > this.deps.maxActors) this.dropLeastUsed();
    });
    return result.catch((error): Failure => {
      console.error(`a command on offer ${offerId} failed:`, String(error));
      live.actor = undefined; // the next command reads the record and the journal again
      return unavailable();
    });
  }

  /** The offer's actor, made the most recently used (the map keeps them in order of use). */
  private liveActor(offerId: string): Live {
    let live = this.live.get(offerId);
    if (live) this.live.delete(offerId);
    else {
      if (this.live.size >= this.deps.maxActors) this.dropLeastUsed();
      live = { actor: undefined, queue: Promise.resolve(), busy: 0 };
    }
    this.live.set(offerId, live);
    return live;
  }

  /** Drops the least recently used idle actor; they come back from their records when needed. */
  private dropLeastUsed(): void {
    for (const [offerId, live] of this.live) {
      if (live.busy > 0) continue;
      this.live.delete(offerId);
      return;
    }
  }
}
