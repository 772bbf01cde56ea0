import { pactError, type PactError } from './errors.js';

export const ISSUED_AT_TOLERANCE_MS = 10 * 60_000;

/**
 * Calls that no pact nonce protects are protected by time: issuedAt within 10 minutes of the wall clock. It is the
 * wall clock, not the test clock's offset, so a client that stamps `Date.now()` keeps working after a test moves
 * deadlines forward with `/__test/clock`.
 */
export function issuedAtProblem(issuedAt: number, now = Date.now()): PactError | undefined {
  if (now - issuedAt > ISSUED_AT_TOLERANCE_MS) return pactError('stale_issuedAt', 'issuedAt is more than 10 minutes old', { now });
  if (issuedAt - now > ISSUED_AT_TOLERANCE_MS) return pactError('too_early', 'issuedAt is more than 10 minutes ahead', { now });
  return undefined;
}
