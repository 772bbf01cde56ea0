import type { FastifyReply, FastifyRequest } from 'fastify';
import { pactError, type PactError } from '../protocol/errors.js';
import type { SignedAction } from '../protocol/schemas.js';
import { issuedAtProblem } from '../protocol/issued-at.js';
import { signedPart, type SignedCall } from '../protocol/signed-call.js';
import { verifySignature } from '../protocol/verify.js';
import { badSignature, sendError } from './errors.js';

/**
 * A call signed for another action or pact does not cover this request: 401. Checked on the raw body,
 * before the route's schema, which would otherwise answer 400 about a `call` meant for another route.
 * The signature itself is the actor host's to verify.
 */
export function scopeProblem(body: Partial<SignedCall>, action: string, pactId: string): PactError | undefined {
  if (typeof body.action === 'string' && body.action !== action) {
    return pactError('invalid_signature', `the call is signed for ${body.action}, this route takes ${action}`);
  }
  if (typeof body.pactId === 'string' && body.pactId !== pactId) {
    return pactError('invalid_signature', `the call is signed for pact "${body.pactId}"`);
  }
  return undefined;
}

/** Refuses, before the schema runs, a call signed for another action or target (see `scopeProblem`). */
export function signedForThisRoute(action: SignedAction) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body;
    if (typeof body !== 'object' || body === null) return; // the schema answers that
    const refused = scopeProblem(body, action, (request.params as { id?: string }).id ?? '');
    if (refused) return sendError(reply, refused);
  };
}

/**
 * A call no pact's nonce protects (access, rail addresses), checked here as no actor sees it: its signature (401),
 * then stateNonce 0 (400) and a fresh issuedAt (422).
 */
export function unboundCallProblem(envelope: SignedCall): PactError | undefined {
  if (!verifySignature(envelope.signer, signedPart(envelope), envelope.sig)) return badSignature();
  if (envelope.stateNonce !== 0) return pactError('invalid_request', `${envelope.action} takes stateNonce 0`, { field: 'stateNonce' });
  return issuedAtProblem(envelope.issuedAt);
}
