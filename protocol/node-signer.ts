import { createPrivateKey, sign } from 'node:crypto';
import { canonicalDigest } from './digest.js';
import type { PartyId } from './party.js';
import type { KeyPair } from './sign.js';

// DER prefix of a PKCS#8-wrapped Ed25519 private key; the raw 32-byte seed follows it.
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** A key that signs as `signPayload` does: lowercase hex Ed25519 over SHA-256(JCS(payload)). */
export interface Signer {
  party: PartyId;
  sign(payload: unknown): string;
}

/** A signer that may sign elsewhere (a worker thread that holds the key): the node's notifications. */
export interface AsyncSigner {
  party: PartyId;
  sign(payload: unknown): Promise<string>;
}

/** `signer`, answering as an AsyncSigner: signing on this thread. */
export const signingHere = (signer: Signer): AsyncSigner => ({ party: signer.party, sign: async (payload) => signer.sign(payload) });

/**
 * The server's signer: node:crypto with the key imported once. Ed25519 is deterministic, so it signs exactly
 * what the SDK's noble `signPayload` does, about ten times faster; the server signs a notification for every
 * pact transition.
 */
export function nodeSigner(key: KeyPair): Signer {
  const privateKey = createPrivateKey({ key: Buffer.concat([ED25519_PKCS8_PREFIX, key.secretKey]), format: 'der', type: 'pkcs8' });
  return { party: key.party, sign: (payload) => sign(null, canonicalDigest(payload), privateKey).toString('hex') };
}
