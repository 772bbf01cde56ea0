import { Ajv, type ValidateFunction } from 'ajv';
import { compiledLazily } from '../protocol/compiled-lazily.js';
import { oversizedPart } from '../machines/pact/limits.js';
import { sharesProblem } from '../machines/pact/rules.js';
import { specProblem, type PactSpec } from '../machines/pact/spec.js';
import type { Proposal, VerdictBody } from '../machines/pact/types.js';
import { canonicalDigest } from '../protocol/digest.js';
import { pactError, type PactError } from '../protocol/errors.js';
import type { PartyId } from '../protocol/party.js';
import { signedPart, type SignedCall } from '../protocol/signed-call.js';
import { verifyBytes, verifySignature } from '../protocol/verify.js';
import type { Check } from '../protocol/verify-pool.js';
import { wellFormedProblem } from '../protocol/well-formed.js';
import { offerSchema, paidPayoutsSchema, signedCallSchema, verdictSchema, type PactAction } from '../protocol/schemas.js';
import { acceptedPactId, offerIdOf, pactSpecOf } from '../machines/offer/rules.js';
import type { AcceptCall, SignedOffer } from '../machines/offer/types.js';
import { issuedAtProblem, ISSUED_AT_TOLERANCE_MS } from '../protocol/issued-at.js';
import type { AdmittedCommand, HostCommand } from './messages.js';
import { commandKindOf, type CommandKind } from './subjects.js';

/**
 * The actor host's door. Whatever arrives on NATS is checked here as if it came from the street: its shape
 * (the gateway's schemas again), then its signature (401), then what a signed call alone can tell (400).
 * Authorization, nonce, state and time (403, 409, 422) are the machine's, in `decide.ts`.
 */
export type Admission = { command: AdmittedCommand } | { error: PactError };

/**
 * A signature admission still has to check, and what is refused (`refusal`) if it does not verify; `decode`
 * names the party ids the rest of the admission will decode (see protocol/verify-pool.ts).
 */
export interface SignatureCheck extends Check {
  refusal: PactError;
}

/**
 * An admission that waits on one signature (the call's or the verdict's): the host checks it where it
 * likes (a worker thread, say), then `then` finishes the admission.
 */
export type Admitting = Admission | { signature: SignatureCheck; then: () => Admission };

const ajv = new Ajv({ coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false });
const PACT_ACTIONS: PactAction[] = [
  'pacts.create', 'pacts.fund', 'pacts.withdraw', 'pacts.propose', 'pacts.cosign', 'pacts.object', 'pacts.cancel',
];
const callValidators = new Map(PACT_ACTIONS.map((action) => [action, compiledLazily(ajv, signedCallSchema(action))]));
const verdictValidator = compiledLazily(ajv, verdictSchema);
const offerValidator = compiledLazily(ajv, offerSchema);
const acceptValidator = compiledLazily(ajv, signedCallSchema('offers.accept'));
const paidValidator = compiledLazily(ajv, paidPayoutsSchema);

/**
 * The digest the gateway worked out to name a create's pact, kept for the admission of that same call object
 * by this process's host, which checks the signature over it. Taken once, by that admission, in the same turn
 * as the naming: a call sent to another host over NATS arrives as a new object and is digested there, and a
 * call object admitted again is digested again.
 */
const namedCreates = new WeakMap<SignedCall, Uint8Array>();

/** The pact id a create call names: a replay of the same envelope names the same pact. */
export function createdPactId(envelope: SignedCall): string {
  const digest = canonicalDigest(signedPart(envelope));
  namedCreates.set(envelope, digest);
  return pactIdOfDigest(digest);
}

function takeNamedDigest(envelope: SignedCall): Uint8Array | undefined {
  const digest = namedCreates.get(envelope);
  namedCreates.delete(envelope);
  return digest;
}

/** A created pact's id from its create call's digest (the one its signature covers): its first 16 bytes in hex. */
const pactIdOfDigest = (digest: Uint8Array) => `p_${Buffer.from(digest.buffer, digest.byteOffset, 16).toString('hex')}`;

/**
 * `wallNow` judges the freshness of a create's `issuedAt` (see protocol/issued-at.ts); the audit passes undefined,
 * as freshness is judged once, at arrival, and a replayed create names the same pact anyway.
 */
export function admit(pactId: string, command: HostCommand, kind: CommandKind, wallNow: number | undefined): Admitting {
  if (kind !== commandKindOf(command)) return { error: pactError('forbidden', `a ${command.type} command cannot come on the ${kind} subject`) };
  switch (command.type) {
    case 'signed':
      return admitSignedCall(pactId, command.envelope, command.payment, wallNow);
    case 'verdict':
      return admitVerdict(pactId, command.verdict);
    case 'accepted':
      return admitAcceptance(pactId, command.offer, command.envelope);
    case 'poke':
      return { command: { type: 'poke' } };
    case 'recordPayouts':
      return shapeProblem(paidValidator(), command.paid, 'paid') ?? { command: { type: 'recordPayouts', paid: command.paid } };
  }
  return { error: pactError('invalid_request', 'unknown command') };
}

/** The whole admission on this thread, the signature checked here too (the audit re-admits this way). */
export function admitNow(pactId: string, command: HostCommand, kind: CommandKind, wallNow: number | undefined): Admission {
  const admitting = admit(pactId, command, kind, wallNow);
  if (!('signature' in admitting)) return admitting;
  const { signer, digest, sig, refusal } = admitting.signature;
  return verifyBytes(signer, digest, sig) ? admitting.then() : { error: refusal };
}

function shapeProblem(validate: ValidateFunction, value: unknown, what: string): { error: PactError } | undefined {
  if (validate(value)) return undefined;
  const first = validate.errors?.[0];
  return { error: pactError('invalid_request', `${what}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`, { field: what }) };
}

/** A part of the call larger than the pact may keep: 413. */
export function oversizeProblem(action: string, call: unknown): PactError | undefined {
  const oversized = oversizedPart(action, call);
  return oversized ? pactError('too_large', `${oversized.field} is larger than ${oversized.limit} bytes`, oversized) : undefined;
}

/** JSON that cannot be signed (400); what the gateway's body parser refuses, checked again for NATS. */
function unsignableProblem(value: unknown): PactError | undefined {
  const problem = wellFormedProblem(value);
  return problem ? pactError('invalid_request', problem) : undefined;
}

function admitSignedCall(pactId: string, envelope: SignedCall, payment: string | undefined, wallNow: number | undefined): Admitting {
  const action = envelope?.action as PactAction;
  const validate = callValidators.get(action)?.();
  if (!validate) return { error: pactError('invalid_signature', `the call is signed for ${String(action)}, not for a pact route`) };
  const malformed = shapeProblem(validate, envelope, 'body');
  if (malformed) return malformed;
  const unstorable = unsignableProblem(envelope) ?? oversizeProblem(action, envelope.call);
  if (unstorable) return { error: unstorable };
  const { signature, signedFor } = action === 'pacts.create'
    ? createSignature(envelope as SignedCall<PactSpec>)
    : { signature: signatureCheck(envelope, callRefusal()), signedFor: envelope.pactId };
  if (signedFor !== pactId) return { error: pactError('invalid_signature', `the call is signed for pact "${envelope.pactId}"`) };
  return { signature, then: () => BUILDERS[action](envelope, payment, wallNow) };
}

const callRefusal = () => pactError('invalid_signature', 'the signature does not verify');

/**
 * A create's check: the digest its signature covers (the gateway's, when it named this call) names the pact
 * it makes, and the parties are named for decoding beside the signer.
 */
function createSignature(envelope: SignedCall<PactSpec>): { signature: SignatureCheck; signedFor: string } {
  const signature = { ...signatureCheck(envelope, callRefusal(), takeNamedDigest(envelope)), decode: envelope.call.parties.map((p) => p.party) };
  return { signature, signedFor: pactIdOfDigest(signature.digest) };
}

const signatureCheck = (signed: { signer: string; sig: string }, refusal: PactError, digest = canonicalDigest(signedPart(signed))): SignatureCheck =>
  ({ signer: signed.signer, digest, sig: signed.sig, refusal });

type Builder = (envelope: SignedCall<any>, payment: string | undefined, wallNow: number | undefined) => Admission;

/** How each verified call becomes a command, with the checks that need nothing but the call. */
const BUILDERS: Record<PactAction, Builder> = {
  'pacts.create': (envelope: SignedCall<PactSpec>, _payment, wallNow) => {
    const refused =
      (envelope.stateNonce !== 0 ? pactError('invalid_request', 'create takes stateNonce 0', { field: 'stateNonce' }) : undefined) ??
      specProblem(envelope.call) ??
      (wallNow === undefined ? undefined : issuedAtProblem(envelope.issuedAt, wallNow));
    return refused ? { error: refused } : { command: { type: 'create', spec: envelope.call, signer: envelope.signer } };
  },
  'pacts.fund': (envelope, payment) => {
    const proof = payment === undefined ? null : parsePaymentHeader(payment);
    if (proof === undefined) return { error: pactError('invalid_request', 'X-PAYMENT is neither JSON nor base64 JSON', { field: 'X-PAYMENT' }) };
    return { command: { type: 'fund', signer: envelope.signer, stateNonce: envelope.stateNonce, proof } };
  },
  'pacts.withdraw': (envelope) => ({ command: { type: 'withdraw', signer: envelope.signer, stateNonce: envelope.stateNonce } }),
  'pacts.propose': (envelope: SignedCall<Proposal>) => {
    const problem = sharesProblem(envelope.call.distribution);
    if (problem) return { error: pactError('invalid_request', problem, { field: 'call.distribution' }) };
    return { command: { type: 'propose', signer: envelope.signer, stateNonce: envelope.stateNonce, proposal: envelope.call } };
  },
  'pacts.cosign': (envelope) => ({ command: { type: 'cosign', signer: envelope.signer, stateNonce: envelope.stateNonce } }),
  'pacts.object': (envelope: SignedCall<{ reason: string }>) => ({
    command: { type: 'object', signer: envelope.signer, stateNonce: envelope.stateNonce, reason: envelope.call.reason },
  }),
  'pacts.cancel': cancelCommand,
};

function admitVerdict(pactId: string, verdict: VerdictBody): Admitting {
  const malformed = shapeProblem(verdictValidator(), verdict, 'body');
  if (malformed) return malformed;
  const unsignable = unsignableProblem(verdict);
  if (unsignable) return { error: unsignable };
  if (verdict.pactId !== pactId) return { error: pactError('invalid_signature', `the verdict is signed for pact "${verdict.pactId}"`) };
  return {
    signature: signatureCheck(verdict, pactError('invalid_signature', 'the verdict signature does not verify')),
    then: () => {
      const problem = sharesProblem(verdict.distribution);
      if (problem) return { error: pactError('invalid_request', problem, { field: 'distribution' }) };
      return { command: { type: 'verdict', verdict } };
    },
  };
}

/**
 * The pact of an offer acceptance: the accepter's signed call (checked like any other) and the publisher's
 * signed offer, which must name each other and this pact. Its `issuedAt` is not judged again: the offer's
 * actor judged it when it recorded the acceptance, and a pact made late (after a crash) is still that one.
 */
function admitAcceptance(pactId: string, offer: SignedOffer, envelope: AcceptCall): Admitting {
  const malformed = shapeProblem(offerValidator(), offer, 'offer') ?? shapeProblem(acceptValidator(), envelope, 'body');
  if (malformed) return malformed;
  const unsignable = unsignableProblem(offer) ?? unsignableProblem(envelope);
  if (unsignable) return { error: unsignable };
  if (offer.template === undefined) return { error: pactError('offer_not_acceptable', 'an offer without a template makes no pact') };
  const offerId = offerIdOf(offer);
  if (envelope.action !== 'offers.accept' || envelope.pactId !== offerId) {
    return { error: pactError('invalid_signature', `the call is not an acceptance of offer ${offerId}`) };
  }
  if (acceptedPactId(offerId, envelope.signer, envelope.call.acceptanceId) !== pactId) {
    return { error: pactError('invalid_signature', `the acceptance does not make pact ${pactId}`) };
  }
  if (envelope.signer === offer.by) return { error: pactError('forbidden', 'the publisher of an offer cannot accept it') };
  if (envelope.stateNonce !== 0) return { error: pactError('invalid_request', 'an acceptance takes stateNonce 0', { field: 'stateNonce' }) };
  // Whoever sends this, an acceptance signed after the offer expired (beyond the clock tolerance) makes no pact.
  if (envelope.issuedAt > offer.expiresAt + ISSUED_AT_TOLERANCE_MS) return { error: pactError('offer_expired', 'the acceptance was signed after the offer expired') };
  return {
    signature: signatureCheck(envelope, pactError('invalid_signature', 'the signature does not verify')),
    then: () => {
      if (!verifySignature(offer.by, signedPart(offer), offer.sig)) return { error: pactError('invalid_signature', 'the offer signature does not verify') };
      const spec = pactSpecOf(offerId, offer, envelope.signer);
      const refused = specProblem(spec);
      if (refused) return { error: refused };
      return { command: { type: 'create', spec, signer: envelope.signer, sourceOffer: { id: offerId, by: offer.by } } };
    },
  };
}

/**
 * X-PAYMENT carries the proof as JSON or base64-encoded JSON; an `Authorization: Payment …` credential (mpp) is
 * the rail's to read, as sent. Undefined when it is none of these.
 */
export function parsePaymentHeader(header: string): unknown {
  if (/^Payment\s/i.test(header)) return header;
  for (const text of [header, Buffer.from(header, 'base64').toString('utf8')]) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null) return value;
    } catch {
      // try the next form
    }
  }
  return undefined;
}

/** What each party signs to approve a mutual cancel (DECISIONS.md). */
export const cancelApproval = (envelope: SignedCall<{ expiresAt: number }>) => ({
  action: 'cancel',
  pactId: envelope.pactId,
  stateNonce: envelope.stateNonce,
  expiresAt: envelope.call.expiresAt,
});

/**
 * Every party approves a mutual cancel by signing `cancelApproval`. The submitter's own signed call counts
 * as its approval. A bad approval signature is a 401.
 */
function cancelCommand(envelope: SignedCall<{ expiresAt: number; sigs: { signer: PartyId; sig: string }[] }>): Admission {
  const approval = cancelApproval(envelope);
  const forged = envelope.call.sigs.find((s) => !verifySignature(s.signer, approval, s.sig));
  if (forged) return { error: pactError('invalid_signature', `the cancel approval of ${forged.signer} does not verify`) };
  const approvedBy = [...new Set([envelope.signer, ...envelope.call.sigs.map((s) => s.signer)])];
  return {
    command: { type: 'cancel', signer: envelope.signer, stateNonce: envelope.stateNonce, expiresAt: envelope.call.expiresAt, approvedBy },
  };
}
