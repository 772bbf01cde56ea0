import * as ed from '@noble/ed25519';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalDigest } from '../../protocol/digest.js';
import { jcs } from '../../protocol/jcs.js';
import { isPartyId, partyIdFromPublicKey, publicKeyOf } from '../../protocol/party.js';
import { generateKeyPair, keyPairFromSeedHex, signed, signPayload } from '../../protocol/sign.js';
import { signedPart } from '../../protocol/signed-call.js';
import { verifyBytes, verifySignature } from '../../protocol/verify.js';

// RFC 8032, section 7.1, TEST 2: a one-byte message.
const RFC = {
  seed: '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
  publicKey: '3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c',
  message: '72',
  signature:
    '92a009a9f0d4cab8720e820b5f642540a2b27b5416503f8fb3762223ebdb69da085ac1e43e15996e458f3613d0f11d8c387b2eaeb4302aeeb00d291612bb0c00',
};

test('RFC 8032 vector: the SDK derives the key and signature, the server verifies it', () => {
  const key = keyPairFromSeedHex(RFC.seed);
  assert.is(bytesToHex(publicKeyOf(key.party)!), RFC.publicKey);
  assert.is(bytesToHex(ed.sign(hexToBytes(RFC.message), key.secretKey)), RFC.signature);
  assert.ok(verifyBytes(key.party, hexToBytes(RFC.message), RFC.signature));
  assert.not.ok(verifyBytes(key.party, hexToBytes('73'), RFC.signature));
});

test('a signature covers SHA-256 of the JCS form, so key order does not matter', () => {
  const key = generateKeyPair();
  const sig = signPayload({ b: 1, a: [1, { d: 2, c: 3 }] }, key);
  assert.ok(verifySignature(key.party, { a: [1, { c: 3, d: 2 }], b: 1 }, sig));
  assert.is(jcs({ b: 1, a: 'x' }), '{"a":"x","b":1}');
  assert.equal(canonicalDigest({ b: 1, a: 'x' }), sha256(new TextEncoder().encode('{"a":"x","b":1}')));
});

test('node:crypto (server) and noble (strict, zip215 off) agree on signed and tampered envelopes', () => {
  for (let i = 0; i < 50; i++) {
    const key = generateKeyPair();
    const envelope = signed({ action: 'pacts.cosign', call: {}, pactId: `p_${i}`, stateNonce: i, issuedAt: 1_700_000_000_000 + i, signer: key.party }, key);
    const digest = canonicalDigest(signedPart(envelope));
    const tampered = { ...signedPart(envelope), stateNonce: i + 1 };
    const publicKey = publicKeyOf(key.party)!;
    const sig = hexToBytes(envelope.sig);
    assert.is(verifySignature(key.party, signedPart(envelope), envelope.sig), ed.verify(sig, digest, publicKey, { zip215: false }));
    assert.ok(verifySignature(key.party, signedPart(envelope), envelope.sig));
    assert.not.ok(verifySignature(key.party, tampered, envelope.sig));
    assert.is(ed.verify(sig, canonicalDigest(tampered), publicKey, { zip215: false }), false);
  }
});

test('a non-canonical signature (S + L) is refused by the server, as by strict noble', () => {
  const key = generateKeyPair();
  const digest = canonicalDigest({ x: 1 });
  const sig = ed.sign(digest, key.secretKey);
  const L = 2n ** 252n + 27742317777372353535851937790883648493n;
  const s = BigInt(`0x${bytesToHex(sig.slice(32).reverse())}`) + L;
  const sPlusL = hexToBytes(s.toString(16).padStart(64, '0')).reverse();
  const malleated = bytesToHex(new Uint8Array([...sig.slice(0, 32), ...sPlusL]));
  assert.not.ok(verifyBytes(key.party, digest, malleated));
  assert.not.ok(ed.verify(hexToBytes(malleated), digest, publicKeyOf(key.party)!, { zip215: false }));
});

test('malformed party ids and signatures are refused, never thrown', () => {
  const key = generateKeyPair();
  const sig = signPayload({ x: 1 }, key);
  for (const signer of ['', 'ed25519:', 'ed25519:0OIl', `ed25519:${'1'.repeat(44)}`, key.party.replace('ed25519:', 'ed448:')]) {
    assert.not.ok(verifySignature(signer, { x: 1 }, sig), signer);
    assert.not.ok(isPartyId(signer), signer);
  }
  for (const bad of ['', sig.toUpperCase(), sig.slice(2), `${sig}00`, 'zz'.repeat(64)]) {
    assert.not.ok(verifySignature(key.party, { x: 1 }, bad), bad);
  }
  assert.is(partyIdFromPublicKey(publicKeyOf(key.party)!), key.party);
});

test.run();
