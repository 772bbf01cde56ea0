// Evidence blobs over HTTP (spec "Blobs", DECISIONS.md "Blobs"): signed uploads, links, downloads, and
// that nothing refused is left on disk.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { generateKeyPair, signPayload } from '../../protocol/sign.js';
import { activePact, buyerFundedPact } from '../support/trades.js';
import { Stack } from '../support/stack.js';

const MAX = 25 * 2 ** 20;
const test = suite<{ stack: Stack }>('blobs over HTTP');

test.before(async (context) => {
  context.stack = await Stack.start({ env: { PACT_BLOB_UPLOADS_AT_ONCE: '200' } });
});
test.after(async ({ stack }) => {
  await stack.stop();
});

const sha256 = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');
const bytesOf = (text: string) => new TextEncoder().encode(text);

/** Every file the store holds: stored blobs and half-received uploads. */
function filesOnDisk(stack: Stack): { stored: string[]; temporary: string[] } {
  const dir = join(stack.dataDir, 'blobs');
  const stored = existsSync(join(dir, 'sha256')) ? readdirSync(join(dir, 'sha256'), { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => e.name) : [];
  return { stored, temporary: readdirSync(join(dir, 'tmp')) };
}

/** Sends a request head (and `body`, if any, never ended) on a raw socket; returns what comes back until the server closes. */
function rawExchange(stack: Stack, lines: string[], body = ''): Promise<string> {
  return new Promise((done, fail) => {
    let answer = '';
    const socket = connect(Number(new URL(stack.url).port), '127.0.0.1', () => socket.write(`${lines.join('\r\n')}\r\n\r\n${body}`));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('close', () => done(answer));
    socket.on('error', fail);
    socket.setTimeout(5_000, () => socket.destroy());
  });
}

function assertNothingNewOnDisk(stack: Stack, before: { stored: string[] }) {
  const after = filesOnDisk(stack);
  assert.equal(after.stored.sort(), before.stored.sort());
  assert.equal(after.temporary, []);
}

test('a party uploads, links and downloads; equal content is stored once', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  const bytes = bytesOf('the delivered summary, 500 words');
  const put = await stack.client.putBlob(seller, id, bytes);
  assert.is(put.status, 200, JSON.stringify(put.body));
  assert.is(put.body.hash, sha256(bytes));
  const again = await stack.client.putBlob(buyer, id, bytes, { declareHash: true });
  assert.is(again.status, 200, JSON.stringify(again.body));
  assert.is(filesOnDisk(stack).stored.filter((name) => name === put.body.hash).length, 1);

  const link = await stack.client.link(buyer, id, put.body.hash);
  assert.is(link.status, 200, JSON.stringify(link.body));
  assert.match(link.body.url, /^\/dl\/[A-Za-z0-9_-]{43}$/);
  assert.ok(link.body.expiresAt > stack.now);
  const downloaded = await stack.client.download(link.body.url);
  assert.is(downloaded.status, 200);
  assert.equal(downloaded.bytes, bytes);
  const twice = await stack.client.download(link.body.url);
  assert.equal(twice.bytes, bytes, 'a link serves any number of downloads until it expires');
});

test('the pinned evaluator uploads and links; a stranger may do neither', async ({ stack }) => {
  const { id } = await activePact(stack);
  const before = filesOnDisk(stack);
  const stranger = generateKeyPair();
  const refused = await stack.client.putBlob(stranger, id, bytesOf('not yours'));
  assert.is(refused.status, 403);
  assert.is(refused.body.error, 'forbidden');
  assertNothingNewOnDisk(stack, before);

  const put = await stack.client.putBlob(stack.evaluator, id, bytesOf('the evaluator’s notes'));
  assert.is(put.status, 200, JSON.stringify(put.body));
  const link = await stack.client.link(stack.evaluator, id, put.body.hash);
  assert.is(link.status, 200, JSON.stringify(link.body));
  assert.equal((await stack.client.download(link.body.url)).bytes, bytesOf('the evaluator’s notes'));
  const strangerLink = await stack.client.link(stranger, id, put.body.hash);
  assert.is(strangerLink.status, 403);
});

test('links are for funded parties only: a party that has not funded gets 403', async ({ stack }) => {
  const { seller, buyer, id } = await buyerFundedPact(stack);
  const put = await stack.client.putBlob(seller, id, bytesOf('draft'));
  assert.is(put.status, 200, 'any party of the pact may upload');
  assert.is((await stack.client.link(seller, id, put.body.hash)).status, 403);
  assert.is((await stack.client.link(buyer, id, put.body.hash)).status, 200);
});

test('refused uploads leave nothing on disk: mismatched body, changed body, forged signature, stale issuedAt', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  const before = filesOnDisk(stack);
  const claimed = sha256(bytesOf('what was signed'));

  const mismatch = await stack.client.putBlob(seller, id, bytesOf('something else'), { signedHash: claimed, declareHash: true });
  assert.is(mismatch.status, 400, JSON.stringify(mismatch.body));
  assert.is(mismatch.body.error, 'hash_mismatch');

  const changed = await stack.client.putBlob(seller, id, bytesOf('something else'), { signedHash: claimed });
  assert.is(changed.status, 401);
  assert.is(changed.body.error, 'invalid_signature');

  const forged = await fetch(`${stack.url}/pacts/${id}/blobs`, {
    method: 'POST',
    headers: {
      'content-type': 'application/octet-stream',
      'x-pact-signer': seller.party,
      'x-pact-issued-at': String(stack.now),
      'x-pact-signature': signPayload({ action: 'put', pactId: id, sha256: claimed, issuedAt: stack.now }, buyer),
      'x-pact-sha256': claimed,
    },
    body: 'what was signed',
  });
  assert.is(forged.status, 401);

  const stale = await stack.client.putBlob(seller, id, bytesOf('late'), { issuedAt: Date.now() - 11 * 60_000 });
  assert.is(stale.status, 422);
  assert.is(stale.body.error, 'stale_issuedAt');
  assertNothingNewOnDisk(stack, before);
});

test('a refusal before the body is read closes the connection instead of draining an endless body', async ({ stack }) => {
  const { id } = await activePact(stack);
  const stranger = generateKeyPair();
  const issuedAt = stack.now;
  const signature = signPayload({ action: 'put', pactId: id, sha256: 'b'.repeat(64), issuedAt }, stranger);
  const started = Date.now();
  const answer = await rawExchange(stack, [
    `POST /pacts/${id}/blobs HTTP/1.1`, 'host: x', 'content-type: application/octet-stream', 'transfer-encoding: chunked',
    `x-pact-signer: ${stranger.party}`, `x-pact-issued-at: ${issuedAt}`, `x-pact-signature: ${signature}`, `x-pact-sha256: ${'b'.repeat(64)}`,
  ], '10000\r\n' + 'z'.repeat(0x10000) + '\r\n');
  assert.match(answer, /^HTTP\/1\.1 401 |^HTTP\/1\.1 403 /);
  assert.match(answer, /connection: close/i);
  assert.ok(Date.now() - started < 4_000, 'closed by the server, not by the client’s time-out');
});

test('bad headers and content types are 400 and 415; an unknown pact 404', async ({ stack }) => {
  const { seller, id } = await activePact(stack);
  const missing = await fetch(`${stack.url}/pacts/${id}/blobs`, { method: 'POST', headers: { 'content-type': 'application/octet-stream' }, body: 'x' });
  assert.is(missing.status, 400);
  assert.is((await missing.json()).field, 'x-pact-signer');
  for (const contentType of ['application/json', 'application/octet-streamx', undefined]) {
    const headers: Record<string, string> = contentType ? { 'content-type': contentType } : {};
    const refused = await fetch(`${stack.url}/pacts/${id}/blobs`, { method: 'POST', headers, body: contentType ? '{}' : new Uint8Array([1, 2]) });
    assert.is(refused.status, 415, String(contentType));
    assert.is((await refused.json()).error, 'unsupported_media_type');
  }
  const unknown = await stack.client.putBlob(seller, `p_${'0'.repeat(32)}`, bytesOf('x'));
  assert.is(unknown.status, 404);
});

test('25 MiB is accepted; one byte more is 413, declared or streamed, and leaves nothing', async ({ stack }) => {
  const { seller, id } = await activePact(stack);
  const largest = new Uint8Array(MAX).fill(7);
  const accepted = await stack.client.putBlob(seller, id, largest);
  assert.is(accepted.status, 200, JSON.stringify(accepted.body));
  const before = filesOnDisk(stack);

  // A declared size over the limit is answered at once, before any of the body is sent.
  const issuedAtDeclared = stack.now;
  const head = await rawExchange(stack, [
    `POST /pacts/${id}/blobs HTTP/1.1`, 'host: x', 'content-type: application/octet-stream', `content-length: ${MAX + 1}`,
    `x-pact-signer: ${seller.party}`, `x-pact-issued-at: ${issuedAtDeclared}`,
    `x-pact-signature: ${signPayload({ action: 'put', pactId: id, sha256: 'a'.repeat(64), issuedAt: issuedAtDeclared }, seller)}`,
  ]);
  assert.match(head, /^HTTP\/1\.1 413 /);
  assert.match(head, /"error":"too_large"/);

  // Without a content-length the limit is met while streaming.
  const oversize = new Uint8Array(MAX + 1).fill(9);
  const issuedAt = stack.now;
  const chunked = await fetch(`${stack.url}/pacts/${id}/blobs`, {
    method: 'POST',
    duplex: 'half',
    headers: {
      'content-type': 'application/octet-stream',
      'x-pact-signer': seller.party,
      'x-pact-issued-at': String(issuedAt),
      'x-pact-signature': signPayload({ action: 'put', pactId: id, sha256: sha256(oversize), issuedAt }, seller),
    },
    body: new ReadableStream({
      start(controller) {
        for (let at = 0; at < oversize.length; at += 1 << 20) controller.enqueue(oversize.subarray(at, at + (1 << 20)));
        controller.close();
      },
    }),
  } as RequestInit).catch((error: unknown) => error);
  // The server answers 413 and closes; a client still sending may see the answer or the closed socket.
  if (chunked instanceof Response) assert.is(chunked.status, 413);
  assertNothingNewOnDisk(stack, before);
});

test('an upload cut off part way leaves nothing on disk', async ({ stack }) => {
  const { seller, id } = await activePact(stack);
  const before = filesOnDisk(stack);
  const issuedAt = stack.now;
  const signature = signPayload({ action: 'put', pactId: id, sha256: 'a'.repeat(64), issuedAt }, seller);
  const { port } = new URL(stack.url);
  await new Promise<void>((done, fail) => {
    const socket = connect(Number(port), '127.0.0.1', () => {
      socket.write(
        `POST /pacts/${id}/blobs HTTP/1.1\r\nhost: x\r\ncontent-type: application/octet-stream\r\ncontent-length: 1000000\r\n` +
          `x-pact-signer: ${seller.party}\r\nx-pact-issued-at: ${issuedAt}\r\nx-pact-signature: ${signature}\r\n\r\n`,
      );
      socket.write(Buffer.alloc(64 * 1024, 1), () => setTimeout(() => (socket.destroy(), done()), 200));
    });
    socket.on('error', fail);
  });
  const deadline = Date.now() + 5_000;
  while (filesOnDisk(stack).temporary.length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  assertNothingNewOnDisk(stack, before);
  assert.is((await stack.client.get(id)).status, 200, 'the service goes on');
});

test('a closed pact takes no uploads (409); a pact holds at most 100 blobs, however many uploads race', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  const uploads = await Promise.all(Array.from({ length: 130 }, (_, i) => stack.client.putBlob(seller, id, bytesOf(`blob number ${i}`))));
  const statuses = uploads.map((u) => u.status);
  assert.is(statuses.filter((s) => s === 200).length, 100, JSON.stringify(statuses));
  assert.is(statuses.filter((s) => s === 409).length, 30);
  assert.is(uploads.find((u) => u.status === 409)!.body.error, 'blob_limit_reached');
  assert.equal(filesOnDisk(stack).temporary, []);

  const stored = uploads.find((u) => u.status === 200)!.body.hash;
  await stack.client.propose(seller, id, { evidence: [{ blob: stored }], distribution: [{ party: seller.party, bp: 10000 }] });
  assert.is((await stack.client.cosign(buyer, id)).body.pact.state, 'SETTLED');
  const closed = await stack.client.putBlob(seller, id, bytesOf('after the end'));
  assert.is(closed.status, 409);
  assert.is(closed.body.error, 'invalid_state');
  assert.is((await stack.client.link(buyer, id, stored)).status, 200, 'evidence stays readable');
});

test('a forged proposal naming a blob is 401 before anything says whether the blob exists', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  const forged = stack.client.signedCall(buyer, 'pacts.propose', id, await stack.client.nonceOf(id), { evidence: [{ blob: 'c'.repeat(64) }], distribution: [{ party: seller.party, bp: 10000 }] });
  const answer = await stack.client.request('POST', `/pacts/${id}/propose`, { ...forged, signer: seller.party });
  assert.is(answer.status, 401);
  assert.is(answer.body.error, 'invalid_signature');
});

test('a proposal may name only blobs uploaded to its pact', async ({ stack }) => {
  const one = await activePact(stack);
  const other = await activePact(stack);
  const elsewhere = await stack.client.putBlob(other.seller, other.id, bytesOf('evidence of another pact'));
  const distribution = [{ party: one.seller.party, bp: 10000 }];
  const refused = await stack.client.propose(one.seller, one.id, { evidence: [{ note: 'see blob' }, { blob: elsewhere.body.hash }], distribution });
  assert.is(refused.status, 400);
  assert.is((refused.body as any).error, 'unknown_blob');
  assert.is((refused.body as any).field, 'call.evidence.1.blob');
  assert.is((await stack.client.get(one.id)).body.pact.state, 'ACTIVE');

  const mine = await stack.client.putBlob(one.seller, one.id, bytesOf('my evidence'));
  const proposed = await stack.client.propose(one.seller, one.id, { evidence: [{ blob: mine.body.hash, note: 'the summary' }], distribution });
  assert.is(proposed.status, 200, JSON.stringify(proposed.body));
  assert.ok(proposed.body.pact.inputHash);
});

test('links expire after five minutes (410) and survive a restart until then; a token never issued is 404', async ({ stack }) => {
  const { seller, id } = await activePact(stack);
  const put = await stack.client.putBlob(seller, id, bytesOf('kept across restarts'));
  const link = await stack.client.link(seller, id, put.body.hash);
  const other = await stack.client.link(seller, id, put.body.hash);
  await stack.kill();
  await stack.startServer();
  assert.equal((await stack.client.download(link.body.url)).bytes, bytesOf('kept across restarts'));
  await stack.advanceClock(5 * 60_000);
  const expired = await fetch(new URL(other.body.url, stack.url));
  assert.is(expired.status, 410);
  assert.is((await expired.json()).error, 'link_expired');
  assert.is((await fetch(`${stack.url}/dl/${'A'.repeat(43)}`)).status, 404);
  assert.is((await fetch(`${stack.url}/dl/short`)).status, 404);
  const unknownBlob = await stack.client.link(seller, id, 'f'.repeat(64));
  assert.is(unknownBlob.status, 404);
});

test.run();
