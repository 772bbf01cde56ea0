import * as ed from '@noble/ed25519';
import { sha256, sha512 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { jcs } from './jcs.js';
import { partyIdFromPublicKey, type PartyId } from './party.js';

ed.hashes.sha512 = sha512;

/** An agent's identity as the SDK holds it. The secret never leaves the agent. */
export interface KeyPair {
  party: PartyId;
  secretKey: Uint8Array;
}

export function keyPairFromSeed(seed: Uint8Array): KeyPair {
  return { party: partyIdFromPublicKey(ed.getPublicKey(seed)), secretKey: seed };
}

export function keyPairFromSeedHex(seedHex: string): KeyPair {
  if (!/^[0-9a-fA-F]{64}$/.test(seedHex.trim())) throw new Error('an Ed25519 seed is 64 hex characters');
  return keyPairFromSeed(hexToBytes(seedHex.trim().toLowerCase()));
}

export function generateKeyPair(): KeyPair {
  return keyPairFromSeed(ed.utils.randomSecretKey());
}

/** Lowercase hex Ed25519 signature over SHA-256(JCS(payload)); noble only, so it runs in Node and in browsers. */
export function signPayload(payload: unknown, key: KeyPair): string {
  return bytesToHex(ed.sign(sha256(utf8ToBytes(jcs(payload))), key.secretKey));
}

/** Returns `payload` with `sig` added. */
export function signed<T extends object>(payload: T, key: KeyPair): T & { sig: string } {
  return { ...payload, sig: signPayload(payload, key) };
}
