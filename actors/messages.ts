import type { AcceptCall, SignedOffer } from '../machines/offer/types.js';
import type { PactCommand } from '../machines/pact/commands.js';
import type { PactSpec } from '../machines/pact/spec.js';
import type { Pact, VerdictBody } from '../machines/pact/types.js';
import type { PactError } from '../protocol/errors.js';
import type { PartyId } from '../protocol/party.js';
import type { SignedCall } from '../protocol/signed-call.js';

/** Creates a pact: from a signed create call, or from an accepted offer (then it names its source). */
export type CreateCommand = { type: 'create'; spec: PactSpec; signer: PartyId; sourceOffer?: { id: string; by: PartyId } };

/** A payout the rail has executed, as the payout worker reports it. */
export interface PaidPayout {
  key: string;
  railRef: string;
}

/**
 * What travels to a pact's host. Signed input travels as signed: the host verifies it, so nothing
 * published on NATS moves a pact without a valid signature. Only `poke` and `recordPayouts` are unsigned,
 * and NATS permits them only to their roles (see `commandKindOf`). `accepted` creates the pact of an offer
 * acceptance the offer's journal has recorded: it carries both signatures, the publisher's and the
 * accepter's, and only actor hosts (where offers are accepted) may send it.
 */
export type HostCommand =
  | { type: 'signed'; envelope: SignedCall; payment?: string }
  | { type: 'accepted'; offer: SignedOffer; envelope: AcceptCall }
  | { type: 'verdict'; verdict: VerdictBody }
  | { type: 'poke' }
  | { type: 'recordPayouts'; paid: PaidPayout[] };

/** What travels on `pact.cmd.<partition>.<kind>`. `id` is also the Nats-Msg-Id. */
export interface CommandMessage {
  id: string;
  pactId: string;
  command: HostCommand;
  /** Core-NATS subject the host answers on (under the bus's inbox prefix); absent when nobody waits. */
  replyTo?: string;
}

/** A host command once admitted: what the pact machine decides on. */
export type AdmittedCommand = PactCommand | CreateCommand;

/** An admitted command with its id and the signed call (and offer) that asked for it, journaled with the entry. */
export interface AdmittedRequest {
  id: string;
  command: AdmittedCommand;
  envelope?: SignedCall;
  offer?: SignedOffer;
}

/**
 * The host's answer. `seq` is the journal position of the pact's newest entry; `text`, the pact's JSON as
 * the actor serialised it once, comes with a local answer only; `headers` are the rail's, for a paid fund.
 */
export type CommandReply = { ok: true; pact: Pact; seq: number; text?: string; headers?: Record<string, string> } | { ok: false; error: PactError; headers?: Record<string, string> };
