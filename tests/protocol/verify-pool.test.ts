import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { canonicalDigest } from '../../protocol/digest.js';
import { generateKeyPair, signPayload } from '../../protocol/sign.js';
import { inlineVerifier, VerifyPool, type Check } from '../../protocol/verify-pool.js';

// Signatures checked on worker threads answer exactly as on the main thread, each check its own answer.

const key = generateKeyPair();
const other = generateKeyPair();
const payload = (n: number) => ({ n, action: 'pacts.cosign' });
const good = (n: number): Check => ({ signer: key.party, digest: canonicalDigest(payload(n)), sig: signPayload(payload(n), key) });
const checks: Check[] = [
  good(1),
  { ...good(2), signer: other.party }, // another key
  { ...good(3), digest: canonicalDigest(payload(4)) }, // another message
  { ...good(5), sig: 'zz' }, // not hex
  { ...good(6), signer: 'ed25519:1111111111111111111111111111111111111111111' }, // not a usable key
  good(7),
];
const expected = [true, false, false, false, false, true];

test('a batch on two worker threads gets one answer per check, in order, as inline checking gives', async () => {
  const pool = new VerifyPool(2);
  try {
    const answers = await Promise.all([...checks, ...checks].map((check) => pool.verify(check)));
    assert.equal(answers, [...expected, ...expected]);
    assert.equal(await Promise.all(checks.map((check) => inlineVerifier.verify(check))), expected);
  } finally {
    await pool.close();
  }
});

test.run();
