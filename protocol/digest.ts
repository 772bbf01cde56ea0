import canonicalize from 'canonicalize';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

/** RFC 8785 (JCS) text of a JSON value. */
export function jcs(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value has no JSON form');
  return text;
}

/** SHA-256 of the JCS form: the 32 bytes every Pact signature covers. */
export function canonicalDigest(value: unknown): Uint8Array {
  return sha256(new TextEncoder().encode(jcs(value)));
}

export function canonicalHashHex(value: unknown): string {
  return bytesToHex(canonicalDigest(value));
}
