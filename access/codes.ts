import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';

/** A fresh six-digit one-time code. */
export const newCode = (): string => String(randomInt(0, 1_000_000)).padStart(6, '0');

/** How a code is kept: SHA-256 over a random salt, the party it is bound to, and the digits. */
export function codeHash(salt: string, party: string, code: string): string {
  return createHash('sha256').update(`${salt}\n${party}\n${code}`).digest('hex');
}

export const newSalt = (): string => randomBytes(16).toString('hex');

/** Whether `code` is the one kept as `hash` for `party`, compared in constant time. */
export function codeMatches(kept: { salt: string; hash: string }, party: string, code: string): boolean {
  return timingSafeEqual(Buffer.from(codeHash(kept.salt, party, code), 'hex'), Buffer.from(kept.hash, 'hex'));
}
