import { pactError, type PactError } from '../protocol/errors.js';
import { signedPart, type SignedCall } from '../protocol/signed-call.js';
import { verifySignature } from '../protocol/verify.js';

/**
 * A call signed for another action or pact does not cover this request: 401. Checked on the raw body,
 * before the route's schema, which would otherwise answer 400 about a `call` meant for another route.
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

/** The call is signed by the key named in `signer`: 401 otherwise. */
export function signatureProblem(body: SignedCall): PactError | undefined {
  return verifySignature(body.signer, signedPart(body), body.sig)
    ? undefined
    : pactError('invalid_signature', 'the signature does not verify');
}

export const ISSUED_AT_TOLERANCE_MS = 10 * 60_000;

/** Calls that no pact nonce protects are protected by time: issuedAt within 10 minutes of the server clock. */
export function issuedAtProblem(issuedAt: number, now: number): PactError | undefined {
  if (now - issuedAt > ISSUED_AT_TOLERANCE_MS) return pactError('stale_issuedAt', 'issuedAt is more than 10 minutes old', { now });
  if (issuedAt - now > ISSUED_AT_TOLERANCE_MS) return pactError('too_early', 'issuedAt is more than 10 minutes ahead', { now });
  return undefined;
}
