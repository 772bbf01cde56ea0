import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { CipherSuite, HkdfSha256 } from '@hpke/core';
import { Chacha20Poly1305 } from '@hpke/chacha20poly1305';
import { DhkemX25519HkdfSha256 } from '@hpke/dhkem-x25519';
import type { KeyPair } from '../protocol/sign.js';
import { MAX_EVENT_LIFETIME_MS, type PrivateEvent } from '../stream/event.js';
import { signEvent } from './stream.js';

// Private Agent Stream events: the plaintext (channel, kind, tags, refs, body, …) is sealed once with a
// random content key (ChaCha20-Poly1305), and that key is wrapped for each reader with HPKE (RFC 9180:
// DHKEM X25519, HKDF-SHA256, ChaCha20-Poly1305). The service stores the signed outer envelope only.

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

/** A private event by `publisher`, readable by each of `readers`, holding `plaintext`, signed. */
export async function sealPrivateEvent(
  publisher: KeyPair,
  readers: Pick<HpkeKey, 'keyId' | 'publicKey'>[],
  plaintext: Record<string, unknown>,
  now = Date.now(),
  lifetimeMs = MAX_EVENT_LIFETIME_MS,
): Promise<PrivateEvent> {
  const contentKey = randomBytes(32);
  const nonce = randomBytes(12);
  const cipher = createCipheriv('chacha20-poly1305', contentKey, nonce, { authTagLength: TAG_BYTES });
  const ciphertext = Buffer.concat([cipher.update(JSON.stringify(plaintext), 'utf8'), cipher.final(), cipher.getAuthTag()]);
  const audience = await Promise.all(
    readers.map(async ({ keyId, publicKey }) => {
      const sender = await suite.createSenderContext({ recipientPublicKey: await suite.kem.deserializePublicKey(buffer(publicKey)), info: buffer(INFO) });
      return { keyId, enc: b64(sender.enc), wrappedKey: b64(await sender.seal(buffer(contentKey))) };
    }),
  );
  return signEvent<PrivateEvent>(
    {
      v: 0,
      privacy: 'private',
      publisher: publisher.party,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + lifetimeMs).toISOString(),
      ciphertextAlg: 'ChaCha20-Poly1305',
      nonce: b64(nonce),
      audience,
      ciphertext: b64(ciphertext),
    },
    publisher,
  );
}

/**
 * The plaintext of a private event for the holder of `key`; undefined when the event names no reader by its
 * key id. Throws when the wrapped key or the ciphertext does not open (not for this key, or tampered).
 */
export async function openPrivateEvent(event: PrivateEvent, key: HpkeKey): Promise<Record<string, unknown> | undefined> {
  const entry = event.audience.find((reader) => reader.keyId === key.keyId);
  if (!entry) return undefined;
  const recipient = await suite.createRecipientContext({
    recipientKey: await suite.kem.deserializePrivateKey(buffer(key.privateKey)),
    enc: buffer(bytesOf(entry.enc)),
    info: buffer(INFO),
  });
  const contentKey = new Uint8Array(await recipient.open(buffer(bytesOf(entry.wrappedKey))));
  const sealed = bytesOf(event.ciphertext);
  const decipher = createDecipheriv('chacha20-poly1305', contentKey, bytesOf(event.nonce), { authTagLength: TAG_BYTES });
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  const text = Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
  return JSON.parse(text) as Record<string, unknown>;
}
