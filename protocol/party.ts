import { Point } from '@noble/ed25519';
import bs58 from 'bs58';
import { BoundedMap } from '../storage/bounded-map.js';

/** `ed25519:<base58 of the 32-byte public key>` */
export type PartyId = `ed25519:${string}`;

const PREFIX = 'ed25519:';

export function partyIdFromPublicKey(publicKey: Uint8Array): PartyId {
  if (publicKey.length !== 32) throw new Error('an Ed25519 public key has 32 bytes');
  return `${PREFIX}${bs58.encode(publicKey)}`;
}

/**
 * The raw public key of a PartyId, or undefined when the id is not a usable Ed25519 key: malformed, not a
 * point of the curve in its one canonical encoding (RFC 8032 strict decoding), or of small order. A
 * small-order key (the identity point, say) "verifies" a constant signature for every message, so it can
 * never stand for an agent.
 */
export function publicKeyOf(partyId: string): Uint8Array | undefined {
  if (!partyId.startsWith(PREFIX)) return undefined;
  const known = checked.use(partyId);
  if (known !== undefined) return known ?? undefined;
  const key = decodedKey(partyId);
  checked.set(partyId, key ?? null);
  return key;
}

/** A party id with what `publicKeyOf` makes of it (null: not usable), as one thread tells another. */
export interface DecodedKey {
  partyId: string;
  key: Uint8Array | null;
}

export const decodedKeyOf = (partyId: string): DecodedKey => ({ partyId, key: publicKeyOf(partyId) ?? null });

/**
 * What `publicKeyOf` of another thread of this process (the verification worker) found: kept as if found
 * here, provided the key is the id's own bytes (a cheap check; the curve is the other thread's word).
 */
export function learnPublicKey({ partyId, key }: DecodedKey): void {
  if (!partyId.startsWith(PREFIX)) return;
  if (key === null || partyIdFromPublicKey(key) === partyId) checked.set(partyId, key);
}

/**
 * Party ids already decoded (a curve point decoding costs about as much as a signature check), the least
 * recently used forgotten first; about 330 bytes each.
 */
const checked = new BoundedMap<string, Uint8Array | null>(16_384);

function decodedKey(partyId: string): Uint8Array | undefined {
  let key: Uint8Array;
  try {
    key = bs58.decode(partyId.slice(PREFIX.length));
  } catch {
    return undefined;
  }
  return key.length === 32 && isUsableKey(key) ? key : undefined;
}

function isUsableKey(key: Uint8Array): boolean {
  try {
    const point = Point.fromBytes(key, false);
    return !point.isSmallOrder() && bytesEqual(point.toBytes(), key);
  } catch {
    return false;
  }
}

const bytesEqual = (a: Uint8Array, b: Uint8Array) => a.length === b.length && a.every((byte, i) => byte === b[i]);

export function isPartyId(value: unknown): value is PartyId {
  return typeof value === 'string' && publicKeyOf(value) !== undefined;
}
