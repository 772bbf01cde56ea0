// Seeded hostile requests to the blob routes: odd headers, bodies, hashes and tokens. None may get a 5xx,
// none may leave a file behind, and the service goes on answering.
import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPair, signPayload } from '../../protocol/sign.js';
import { prng, type Random } from '../support/prng.js';
import { Stack } from '../support/stack.js';
import { activePact } from '../support/trades.js';

const CASES = 300;
const SEED = 0x0b10b;

/** A header value an attacker might send: well formed, almost well formed, or nonsense. */
function oddValue(random: Random, good: string): string {
  return random.pick([
    good,
    good.toUpperCase(),
    `${good} `,
    good.slice(0, -1),
    `${good}0`,
    '',
    '-1',
    '1e12',
    '99999999999999999999',
    'ed25519:',
    '\u00e9\u00e9',
    'x'.repeat(random.int(1, 4_000)),
  ]);
}

test('hostile blob uploads, links and downloads: never a 5xx, never a file left behind', async () => {
  const stack = await Stack.start();
  try {
    const { seller, id } = await activePact(stack);
    const stranger = generateKeyPair();
    const stored = (await stack.client.putBlob(seller, id, new TextEncoder().encode('kept'))).body.hash;
    const random = prng(SEED);
    const statuses: Record<string, number> = {};
    for (let i = 0; i < CASES; i++) {
      const response = await hostileRequest(stack, random, { id, stored, seller, stranger });
      statuses[response.status] = (statuses[response.status] ?? 0) + 1;
      assert.ok(response.status < 500, `case ${i} (seed ${SEED}) answered ${response.status}: ${response.text.slice(0, 200)}`);
    }
    assert.equal(readdirSync(join(stack.dataDir, 'blobs', 'tmp')), []);
    assert.is((await stack.client.get(id)).status, 200);
    assert.ok(Object.keys(statuses).length >= 5, `the cases reached many answers: ${JSON.stringify(statuses)}`);
  } finally {
    await stack.stop();
  }
});

type Keys = { id: string; stored: string; seller: ReturnType<typeof generateKeyPair>; stranger: ReturnType<typeof generateKeyPair> };

async function hostileRequest(stack: Stack, random: Random, keys: Keys): Promise<{ status: number; text: string }> {
  const kind = random.pick(['upload', 'upload', 'link', 'download'] as const);
  const pactId = random.next() < 0.85 ? keys.id : oddValue(random, keys.id);
  const key = random.next() < 0.7 ? keys.seller : keys.stranger;
  const issuedAt = stack.now + random.pick([0, 0, -11 * 60_000, 11 * 60_000]);
  const send = (path: string, init: RequestInit) =>
    fetch(`${stack.url}${encodeURI(path)}`, init).then(async (r) => ({ status: r.status, text: await r.text() }), () => ({ status: 0, text: 'connection closed' }));
  if (kind === 'download') return send(`/dl/${oddValue(random, 'A'.repeat(43))}`, {});
  if (kind === 'link') {
    const hash = random.next() < 0.5 ? keys.stored : oddValue(random, keys.stored);
    const body = { signer: oddValue(random, key.party), issuedAt, sig: signPayload({ action: 'link', pactId, hash, issuedAt }, key) };
    const payload = random.next() < 0.8 ? JSON.stringify(body) : oddValue(random, JSON.stringify(body));
    return send(`/pacts/${pactId}/blobs/${hash}/link`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: payload });
  }
  const bytes = new Uint8Array(random.int(0, 70_000)).fill(random.int(0, 255));
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const headers: Record<string, string> = {
    'content-type': random.next() < 0.8 ? 'application/octet-stream' : oddValue(random, 'application/octet-stream'),
    'x-pact-signer': random.next() < 0.7 ? key.party : oddValue(random, key.party),
    'x-pact-issued-at': random.next() < 0.7 ? String(issuedAt) : oddValue(random, String(issuedAt)),
    'x-pact-signature': random.next() < 0.7 ? signPayload({ action: 'put', pactId, sha256, issuedAt }, key) : oddValue(random, 'ab'.repeat(64)),
  };
  if (random.next() < 0.4) headers['x-pact-sha256'] = random.next() < 0.5 ? sha256 : oddValue(random, sha256);
  for (const name of Object.keys(headers)) if (headers[name] === '' && random.next() < 0.5) delete headers[name];
  const safe = Object.fromEntries(Object.entries(headers).filter(([, value]) => /^[\t\x20-\x7e]*$/.test(value)));
  return send(`/pacts/${pactId}/blobs`, { method: 'POST', headers: safe, body: bytes });
}

test.run();
