import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { nodeSigner } from '../../protocol/node-signer.js';
import { generateKeyPair, signPayload } from '../../protocol/sign.js';
import { verifySignature } from '../../protocol/verify.js';

// The server's node:crypto signer against the SDK's noble one: Ed25519 is deterministic, so the same key and
// payload give the same signature, which the server's check accepts.

test('nodeSigner signs exactly what signPayload signs, for any key and payload', () => {
  const payloads: unknown[] = ['evt_0123', { b: [1, 'two', null], a: { z: true, y: 1.5 } }, [], 'ünïcødé ✓'];
  for (let i = 0; i < 20; i++) {
    const key = generateKeyPair();
    const signer = nodeSigner(key);
    assert.is(signer.party, key.party);
    for (const payload of [...payloads, { i, nested: { at: Date.now() } }]) {
      const signature = signer.sign(payload);
      assert.is(signature, signPayload(payload, key));
      assert.ok(verifySignature(key.party, payload, signature));
    }
  }
});

test('a signature from one key does not verify as another', () => {
  const [one, other] = [generateKeyPair(), generateKeyPair()];
  assert.not.ok(verifySignature(other.party, 'evt_x', nodeSigner(one).sign('evt_x')));
});

test.run();
