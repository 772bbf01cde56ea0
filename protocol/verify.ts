import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { canonicalDigest } from './digest.js';
import { BoundedMap } from '../storage/bounded-map.js';
import { publicKeyOf } from './party.js';

const SIG_HEX = /^[0-9a-f]{128}$/;
// An imported key holds about 1.5 KB of OpenSSL memory beside its JS object: 4,096 of them cost some 6 MiB
// (50,000 cost 77 MiB), and a key not held costs one import (about a tenth of a check).
const keyCache = new BoundedMap<string, KeyObject>(4_096);

function keyObjectOf(partyId: string): KeyObject | undefined {
  const cached = keyCache.use(partyId);
  if (cached) return cached;
  const raw = publicKeyOf(partyId);
  if (!raw) return undefined;
  let key: KeyObject;
  try {
    key = importRawKey(raw);
  } catch {
    return undefined;
  }
  keyCache.set(partyId, key);
  return key;
}

/**
 * The KeyObject of a raw Ed25519 public key, imported as a JWK: OpenSSL takes its raw bytes as they are,
 * where the same key as DER goes through OpenSSL 3's decoders, about eight times slower (85 against 10 µs
 * here; each new party costs one import).
 */
const importRawKey = (raw: Uint8Array): KeyObject =>
  createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(raw).toString('base64url') }, format: 'jwk' });

/** Server-side check (node:crypto, strict RFC 8032) of `sig` over SHA-256(JCS(payload)). */
export function verifySignature(signer: string, payload: unknown, sigHex: string): boolean {
  return verifyBytes(signer, canonicalDigest(payload), sigHex);
}

/** The raw Ed25519 check of a lowercase-hex signature over `message` by the key in `signer`. */
export function verifyBytes(signer: string, message: Uint8Array, sigHex: string): boolean {
  if (typeof sigHex !== 'string' || !SIG_HEX.test(sigHex)) return false;
  const key = keyObjectOf(signer);
  if (!key) return false;
  return verify(null, message, key, Buffer.from(sigHex, 'hex'));
}
