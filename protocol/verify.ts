import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import { canonicalDigest } from './digest.js';
import { publicKeyOf } from './party.js';

// DER prefix of an SPKI-wrapped Ed25519 public key; the raw 32 bytes follow it.
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const SIG_HEX = /^[0-9a-f]{128}$/;
const KEY_CACHE_LIMIT = 50_000;
const keyCache = new Map<string, KeyObject>();

function keyObjectOf(partyId: string): KeyObject | undefined {
  const cached = keyCache.get(partyId);
  if (cached) return cached;
  const raw = publicKeyOf(partyId);
  if (!raw) return undefined;
  let key: KeyObject;
  try {
    key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
  } catch {
    return undefined;
  }
  if (keyCache.size >= KEY_CACHE_LIMIT) keyCache.delete(keyCache.keys().next().value as string);
  keyCache.set(partyId, key);
  return key;
}

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
