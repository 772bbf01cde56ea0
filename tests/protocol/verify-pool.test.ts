import { Point } from '@noble/ed25519';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { learnPublicKey, partyIdFromPublicKey, publicKeyOf } from '../../protocol/party.js';
import { canonicalDigest } from '../../protocol/digest.js';
import { nodeSigner } from '../../protocol/node-signer.js';
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

test('given the node key, the pool signs on its workers exactly what nodeSigner signs, checks mixed in the same batches', async () => {
  const pool = new VerifyPool(2, key);
  try {
    const payloads = Array.from({ length: 20 }, (_, n) => `evt_${n}`);
    const [signatures, answers] = await Promise.all([
      Promise.all(payloads.map((payload) => pool.signer.sign(payload))),
      Promise.all(checks.map((check) => pool.verify(check))),
    ]);
    assert.equal(signatures, payloads.map((payload) => nodeSigner(key).sign(payload)));
    assert.equal(answers, expected);
    assert.is(pool.signer.party, key.party);
  } finally {
    await pool.close();
  }
  assert.throws(() => new VerifyPool(0).signer, /no key/);
});

test('a learned key that is not the party id\'s own bytes is not kept', () => {
  const [a, b] = [generateKeyPair(), generateKeyPair()];
  learnPublicKey({ partyId: a.party, key: publicKeyOf(b.party)! });
  assert.is(partyIdFromPublicKey(publicKeyOf(a.party)!), a.party);
});

/** How many curve points this thread decodes while `run` runs (the workers have their own copy of noble). */
async function decodingsDuring(run: () => Promise<unknown>): Promise<number> {
  const fromBytes = Point.fromBytes;
  let count = 0;
  Point.fromBytes = (...args) => (count++, fromBytes.apply(Point, args));
  try {
    await run();
    return count;
  } finally {
    Point.fromBytes = fromBytes;
  }
}

test('party ids a check asks to decode are decoded on the worker, and this thread then knows them', async () => {
  const pool = new VerifyPool(1);
  try {
    const [learned, notLearned] = [generateKeyPair().party, generateKeyPair().party];
    const unusable = partyIdFromPublicKey(Uint8Array.of(1, ...new Array(31).fill(0))); // the identity point: small order
    const check = { ...good(8), decode: [learned, unusable] };
    assert.is(await decodingsDuring(async () => assert.ok(await pool.verify(check))), 0);
    assert.is(await decodingsDuring(async () => {
      assert.ok(publicKeyOf(learned));
      assert.is(publicKeyOf(unusable), undefined);
    }), 0);
    assert.is(await decodingsDuring(async () => assert.ok(publicKeyOf(notLearned))), 1);
    const forged = generateKeyPair().party;
    assert.not.ok(await pool.verify({ ...good(9), sig: good(10).sig, decode: [forged] }));
    assert.is(await decodingsDuring(async () => assert.ok(publicKeyOf(forged))), 1, 'a check that fails buys no decoding');
  } finally {
    await pool.close();
  }
});

test.run();
