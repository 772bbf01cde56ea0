import { pactError, type PactError } from '../protocol/errors.js';
import { signedPart, type SignedCall } from '../protocol/signed-call.js';
import { verifySignature } from '../protocol/verify.js';

/**
 * The stateless half of authentication: the call must be signed for this route's action and this pact,
 * by the key named in `signer`. Anything else means the signature does not cover this request: 401.
 */
export function signatureProblem(body: SignedCall, action: string, pactId: string): PactError | undefined {
  if (body.action !== action) {
    return pactError('invalid_signature', `the call is signed for ${body.action}, this route takes ${action}`);
  }
  if (body.pactId !== pactId) return pactError('invalid_signature', `the call is signed for pact "${body.pactId}"`);
  if (!verifySignature(body.signer, signedPart(body), body.sig)) {
    return pactError('invalid_signature', 'the signature does not verify');
  }
  return undefined;
}

export const ISSUED_AT_TOLERANCE_MS = 10 * 60_000;

/** Calls that no pact nonce protects are protected by time: issuedAt within 10 minutes of the server clock. */
export function issuedAtProblem(issuedAt: number, now: number): PactError | undefined {
  if (now - issuedAt > ISSUED_AT_TOLERANCE_MS) return pactError('stale_issuedAt', 'issuedAt is more than 10 minutes old', { now });
  if (issuedAt - now > ISSUED_AT_TOLERANCE_MS) return pactError('too_early', 'issuedAt is more than 10 minutes ahead', { now });
  return undefined;
}
