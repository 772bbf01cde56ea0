import * as nodeCrypto from 'node:crypto';
import { jcs } from './jcs.js';

// The server's digest, on node:crypto (the verifying hot path); signers use protocol/sign.ts, which runs anywhere.
// The one-shot `hash` (Node 20.12) builds no Hash object; the CLI, which bundles this file, runs on any Node 20.
const sha256 = typeof nodeCrypto.hash === 'function'
  ? (text: string) => nodeCrypto.hash('sha256', text, 'buffer')
  : (text: string) => nodeCrypto.createHash('sha256').update(text, 'utf8').digest();

const sha256OfJcs = (value: unknown) => sha256(jcs(value));

/** SHA-256 of the JCS form: the 32 bytes every Pact signature covers (bytes of its own, not a pooled view). */
export function canonicalDigest(value: unknown): Uint8Array {
  return Uint8Array.from(sha256OfJcs(value));
}

export function canonicalHashHex(value: unknown): string {
  return sha256OfJcs(value).toString('hex');
}
