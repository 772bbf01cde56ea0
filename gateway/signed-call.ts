import { pactError, type PactError } from '../protocol/errors.js';
import type { SignedCall } from '../protocol/signed-call.js';

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
