import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { CipherSuite, HkdfSha256 } from '@hpke/core';
import { Chacha20Poly1305 } from '@hpke/chacha20poly1305';
import { DhkemX25519HkdfSha256 } from '@hpke/dhkem-x25519';
import { jcs } from '../protocol/jcs.js';
import type { KeyPair } from '../protocol/sign.js';
import { MAX_EVENT_LIFETIME_MS, type PrivateEvent } from '../stream/event.js';
import { signEvent } from './stream.js';

// Private Agent Stream events: the plaintext (channel, kind, tags, refs, body, …) is sealed once with a
// random content key (ChaCha20-Poly1305), and that key is wrapped for each reader with HPKE (RFC 9180:
// DHKEM X25519, HKDF-SHA256, ChaCha20-Poly1305). The service stores the signed outer envelope only. Both
// seals are bound to the envelope (associated data): the content to its publisher and times, each wrapped
// key to its reader and publisher, so nobody can lift a ciphertext into an event of their own.

const suite = new CipherSuite({ kem: new DhkemX25519HkdfSha256(), kdf: new HkdfSha256(), aead: new Chacha20Poly1305() });
/** Binds a wrapped key to this use. */
const INFO = new TextEncoder().encode('pact agent stream v0 content key');
const TAG_BYTES = 16;

/** A reader's HPKE key: raw X25519 keys (32 bytes each) and the `keyId` senders address it by. */
export interface HpkeKey {
  keyId: string;
  publicKey: Uint8Array;
  privateKey: Uint8Array;
}

/** `hpke_` + the first 16 bytes of the SHA-256 of the raw public key, base64url. */
export const keyIdOf = (publicKey: Uint8Array) => `hpke_${createHash('sha256').update(publicKey).digest().subarray(0, 16).toString('base64url')}`;

export async function newHpkeKey(): Promise<HpkeKey> {
  const pair = await suite.kem.generateKeyPair();
  const publicKey = new Uint8Array(await suite.kem.serializePublicKey(pair.publicKey));
  const privateKey = new Uint8Array(await suite.kem.serializePrivateKey(pair.privateKey));
  return { keyId: keyIdOf(publicKey), publicKey, privateKey };
}

const b64 = (bytes: Uint8Array | ArrayBuffer) => Buffer.from(bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes).toString('base64url');
const bytesOf = (text: string) => new Uint8Array(Buffer.from(text, 'base64url'));
const buffer = (bytes: Uint8Array) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;

type Envelope = Pick<PrivateEvent, 'v' | 'publisher' | 'createdAt' | 'expiresAt'>;
const contentAad = ({ v, publisher, createdAt, expiresAt }: Envelope) => Buffer.from(jcs({ v, publisher, createdAt, expiresAt }));
const keyAad = (keyId: string, publisher: string) => buffer(new Uint8Array(Buffer.from(jcs({ keyId, publisher }))));

/** A private event by `publisher`, readable by the holder of each of `readers` (X25519 public keys), holding `plaintext`, signed. */
export async function sealPrivateEvent(
  publisher: KeyPair,
  readers: Uint8Array[],
  plaintext: Record<string, unknown>,
  now = Date.now(),
  lifetimeMs = MAX_EVENT_LIFETIME_MS,
): Promise<PrivateEvent> {
  const envelope: Envelope = {
    v: 0,
    publisher: publisher.party,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + lifetimeMs).toISOString(),
  };
  const contentKey = randomBytes(32);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('chacha20-poly1305', contentKey, nonce, { authTagLength: TAG_BYTES });
  cipher.setAAD(contentAad(envelope), { plaintextLength: Buffer.byteLength(JSON.stringify(plaintext)) });
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(plaintext), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const audience = await Promise.all(
    readers.map(async (publicKey) => {
      const keyId = keyIdOf(publicKey);
      const sender = await suite.createSenderContext({ recipientPublicKey: await suite.kem.deserializePublicKey(buffer(publicKey)), info: buffer(INFO) });
      return { keyId, enc: b64(sender.enc), wrappedKey: b64(await sender.seal(buffer(contentKey), keyAad(keyId, publisher.party))) };
    }),
  );
  const sealed = { ...envelope, privacy: 'private' as const, ciphertextAlg: 'ChaCha20-Poly1305' as const, nonce: b64(nonce), audience, ciphertext: b64(ciphertext) };
  return signEvent<PrivateEvent>(sealed, publisher);
}

/**
 * The plaintext of a private event for the holder of `key`; undefined when the event names no reader by its
 * key id. Throws when the wrapped key or the ciphertext does not open (not for this key, or tampered).
 */
export async function openPrivateEvent(event: PrivateEvent, key: HpkeKey): Promise<Record<string, unknown> | undefined> {
  if (event.ciphertextAlg !== 'ChaCha20-Poly1305') throw new Error(`cannot open ${event.ciphertextAlg}`);
  const entries = event.audience.filter((reader) => reader.keyId === key.keyId);
  if (entries.length === 0) return undefined;
  const contentKey = await unwrapAny(entries, key, event.publisher);
  const sealed = bytesOf(event.ciphertext);
  const decipher = createDecipheriv('chacha20-poly1305', contentKey, bytesOf(event.nonce), { authTagLength: TAG_BYTES });
  decipher.setAAD(contentAad(event), { plaintextLength: sealed.length - TAG_BYTES });
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const text = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  return JSON.parse(text) as Record<string, unknown>;
}

/** The content key from the first of `entries` (all addressed to `key`'s id) that opens with `key`. */
async function unwrapAny(entries: PrivateEvent['audience'], key: HpkeKey, publisher: string): Promise<Uint8Array> {
  const recipientKey = await suite.kem.deserializePrivateKey(buffer(key.privateKey));
  let failure: unknown;
  for (const entry of entries) {
    try {
      const recipient = await suite.createRecipientContext({ recipientKey, enc: buffer(bytesOf(entry.enc)), info: buffer(INFO) });
      return new Uint8Array(await recipient.open(buffer(bytesOf(entry.wrappedKey)), keyAad(key.keyId, publisher)));
    } catch (error) {
      failure = error;
    }
  }
  throw failure;
}
