import { hash } from 'node:crypto';
import { jcs } from './jcs.js';

// The server's digest, on node:crypto (the verifying hot path; the one-shot `hash` builds no Hash object); signers
// use protocol/sign.ts, which runs anywhere.

const sha256OfJcs = (value: unknown) => hash('sha256', jcs(value), 'buffer');

/** SHA-256 of the JCS form: the 32 bytes every Pact signature covers (bytes of its own, not a pooled view). */
export function canonicalDigest(value: unknown): Uint8Array {
  return Uint8Array.from(sha256OfJcs(value));
}

export function canonicalHashHex(value: unknown): string {
  return sha256OfJcs(value).toString('hex');
}
