import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalDigest } from '../../protocol/digest.js';
import { nodeSigner } from '../../protocol/node-signer.js';
import { OwnSignatures } from '../../protocol/own-signatures.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { inlineVerifier, type Check, type Verifier } from '../../protocol/verify-pool.js';

/** The real check, counting the calls that reach it. */
function counted(): Verifier & { calls: number } {
  const verifier = { calls: 0, verify: (check: Check) => (verifier.calls++, inlineVerifier.verify(check)), close: async () => undefined };
  return verifier;
}

function setUp() {
  const key = generateKeyPair();
  const own = new OwnSignatures(key.party);
  const inner = counted();
  return { key, signer: own.signing(nodeSigner(key)), verifier: own.checking(inner), inner };
}

const flipped = (sig: string) => `${sig.slice(0, -1)}${sig.endsWith('0') ? '1' : '0'}`;

test('a signature the process made passes its first check without a verification', async () => {
  const { key, signer, verifier, inner } = setUp();
  const sig = signer.sign('evt_1');
  assert.ok(await verifier.verify({ signer: key.party, digest: canonicalDigest('evt_1'), sig }));
  assert.is(inner.calls, 0);
  assert.ok(await verifier.verify({ signer: key.party, digest: canonicalDigest('evt_1'), sig }), 'checked again, it is verified');
  assert.is(inner.calls, 1);
});

test('anything but the exact signature, digest and signer is verified, and a forgery refused', async () => {
  const { key, signer, verifier, inner } = setUp();
  const sig = signer.sign('evt_2');
  const other = generateKeyPair();
  assert.not.ok(await verifier.verify({ signer: key.party, digest: canonicalDigest('evt_2'), sig: flipped(sig) }));
  assert.not.ok(await verifier.verify({ signer: key.party, digest: canonicalDigest('evt_3'), sig }));
  assert.not.ok(await verifier.verify({ signer: other.party, digest: canonicalDigest('evt_2'), sig }));
  assert.is(inner.calls, 3);
  assert.ok(await verifier.verify({ signer: key.party, digest: canonicalDigest('evt_2'), sig }), 'the genuine check still passes unverified');
  assert.is(inner.calls, 3);
});

test('it remembers the signatures of its own party only', () => {
  const own = new OwnSignatures(generateKeyPair().party);
  assert.throws(() => own.signing(nodeSigner(generateKeyPair())), /own party/);
});

test.run();
