import { nodeSigner, type Signer } from '../../../protocol/node-signer.js';
import { keyPairFromSeed, type KeyPair } from '../../../protocol/sign.js';
import { verifySignature } from '../../../protocol/verify.js';

// Signing for the fuzzer: the server's node:crypto signer (much faster than the SDK's pure-JS one, same
// deterministic Ed25519 signatures), keys derived from the seeded PRNG.

export interface FuzzKey extends KeyPair {
  signer: Signer;
}

export function fuzzKey(seed: Uint8Array): FuzzKey {
  const pair = keyPairFromSeed(seed);
  return { ...pair, signer: nodeSigner(pair) };
}

/** Lowercase hex Ed25519 over SHA-256(JCS(payload)); a random-looking constant when the payload has no JCS form. */
export function sign(payload: unknown, key: FuzzKey): string {
  try {
    return key.signer.sign(payload);
  } catch {
    return 'e'.repeat(128); // lone surrogates, NaN: there is nothing to sign, the server cannot verify either
  }
}

export function signedBy<T extends object>(payload: T, key: FuzzKey): T & { sig: string } {
  return { ...payload, sig: sign(payload, key) };
}

/** Whether the server's own check would accept `sig` (false, not a throw, for payloads without JCS form). */
export function verifies(signer: unknown, payload: unknown, sig: unknown): boolean {
  try {
    return typeof signer === 'string' && typeof sig === 'string' && verifySignature(signer, payload, sig);
  } catch {
    return false;
  }
}

/**
 * Small-order points as PartyIds: the identity (01 00…), the point of order 2 (ec ff…7f), and order-4/8
 * encodings. With the identity as key, R = identity and S = 0 satisfy the cofactorless equation for every
 * message, so `"01" + "00".repeat(63)` is a "valid" signature of anything unless the verifier rejects
 * small-order keys.
 */
export const IDENTITY_PARTY = 'ed25519:4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM';
export const SMALL_ORDER_KEYS: readonly (readonly [name: string, hex: string])[] = [
  ['identity', '0100000000000000000000000000000000000000000000000000000000000000'],
  ['order 2', 'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'],
  ['order 4 (all zero)', '0000000000000000000000000000000000000000000000000000000000000000'],
  ['order 4 (sign bit)', '0000000000000000000000000000000000000000000000000000000000000080'],
  ['order 8 (c7…7a)', 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'],
  ['order 8 (c7…fa)', 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa'],
  ['order 8 (26…05)', '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05'],
  ['order 8 (26…85)', '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85'],
  ['non-canonical y = p + 1', 'eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'],
];
/** Constant signatures tried with those keys: R = identity with S = 0, all zero, R = order-2 point with S = 0. */
export const SMALL_ORDER_SIGS: readonly (readonly [name: string, hex: string])[] = [
  ['R = identity, S = 0 ("01" + "00"*63)', `01${'00'.repeat(63)}`],
  ['all zero', '00'.repeat(64)],
  ['R = order-2 point, S = 0', `ec${'ff'.repeat(30)}7f${'00'.repeat(32)}`],
  ['R = identity, S = 1', `01${'00'.repeat(31)}01${'00'.repeat(31)}`],
];
