import bs58 from 'bs58';

/** `ed25519:<base58 of the 32-byte public key>` */
export type PartyId = `ed25519:${string}`;

const PREFIX = 'ed25519:';

export function partyIdFromPublicKey(publicKey: Uint8Array): PartyId {
  if (publicKey.length !== 32) throw new Error('an Ed25519 public key has 32 bytes');
  return `${PREFIX}${bs58.encode(publicKey)}`;
}

/** The raw public key of a PartyId, or undefined when the id is malformed. */
export function publicKeyOf(partyId: string): Uint8Array | undefined {
  if (!partyId.startsWith(PREFIX)) return undefined;
  try {
    const key = bs58.decode(partyId.slice(PREFIX.length));
    return key.length === 32 ? key : undefined;
  } catch {
    return undefined;
  }
}

export function isPartyId(value: unknown): value is PartyId {
  return typeof value === 'string' && publicKeyOf(value) !== undefined;
}
