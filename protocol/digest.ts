import { createHash } from 'node:crypto';
import canonicalize from 'canonicalize';

/** RFC 8785 (JCS) text of a JSON value. */
export function jcs(value: unknown): string {
  const text = canonicalize(value);
  if (text === undefined) throw new Error('value has no JSON form');
  return text;
}

/** SHA-256 of the JCS form: the 32 bytes every Pact signature covers. */
export function canonicalDigest(value: unknown): Uint8Array {
  const digest = createHash('sha256').update(jcs(value), 'utf8').digest();
  return new Uint8Array(digest.buffer, digest.byteOffset, digest.length);
}

export function canonicalHashHex(value: unknown): string {
  return createHash('sha256').update(jcs(value), 'utf8').digest('hex');
}
