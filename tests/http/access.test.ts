import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { publicEvent } from '../../client/stream.js';
import { generateKeyPair, type KeyPair } from '../../protocol/sign.js';
import { MailServer } from '../support/mail-server.js';
import { offerBy } from '../support/offers.js';
import { tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// Invite mode over HTTP and real SMTP (escrow-service.md, Authentication 6; DECISIONS.md, Access): writes
// refused until a party is allowed, codes mailed and verified, the operator's calls, and a revoke seen on a
// second server process at once.

const test = suite<{ first: Stack; second: Stack; mail: MailServer; admin: KeyPair }>('invite mode');

test.before(async (context) => {
  context.mail = await MailServer.start();
  context.admin = generateKeyPair();
  const keyFile = join(mkdtempSync(join(tmpdir(), 'pact-server-key-')), 'server.seed');
  writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`);
  const env = { PACT_ACCESS_MODE: 'invite', PACT_SMTP_URL: context.mail.url, PACT_MAIL_FROM: 'Pact <pact@test.example>', PACT_ADMIN_PARTY: context.admin.party, PACT_SERVER_KEY_FILE: keyFile };
  context.first = await Stack.start({ env });
  // The second server limits codes per client (the first has no such limit, so the other tests can ask freely).
  context.second = await Stack.start({ env: { ...env, PACT_RATE_LIMIT_ACCESS: '3' }, natsUrl: context.first.natsUrl });
});
test.after(async ({ first, second, mail }) => {
  await second.stop();
  await first.stop();
  await mail.stop();
});

let n = 0;
const address = (domain = 'example.org') => `agent${++n}.${Date.now()}@${domain}`;
const errorOf = (response: { body: unknown }) => (response.body as { error?: string }).error;

/** Asks for a code for `key` at `email` and verifies it: the status it ends in. */
async function verified(stack: Stack, mail: MailServer, key: KeyPair, email: string): Promise<string> {
  const before = mail.mails.length;
  const asked = await stack.client.requestAccess(key, email);
  assert.is(asked.status, 200, JSON.stringify(asked.body));
  const answer = await stack.client.verifyAccess(key, await mail.codeFor(email, before));
  assert.is(answer.status, 200, JSON.stringify(answer.body));
  return answer.body.status;
}

async function allow(stack: Stack, admin: KeyPair, party: string): Promise<void> {
  const done = await stack.client.adminAccess(admin, { action: 'allow', target: party });
  assert.is(done.status, 200, JSON.stringify(done.body));
}

test('health and GET /access tell the mode; a party never seen is none; a bad party id is 400', async ({ first }) => {
  assert.equal((await first.client.request('GET', '/health')).body.access, { mode: 'invite' });
  assert.equal((await first.client.accessOf(generateKeyPair().party)).body, { mode: 'invite', status: 'none' });
  const bad = await first.client.accessOf('nobody');
  assert.is(bad.status, 400);
  assert.is(errorOf(bad), 'invalid_request');
});

test('the whole flow: refused, request, mail, verify (pending), allow, write, revoke, refused on the other server', async ({ first, second, mail, admin }) => {
  const seller = generateKeyPair();
  const buyer = generateKeyPair();
  const refused = await first.client.create(seller, tradeSpec(seller, buyer));
  assert.is(refused.status, 403);
  assert.is(errorOf(refused), 'access_required');
  const { request } = refused.body as unknown as { request: { route: string; action: string } };
  assert.is(request.route, 'POST /access/request');
  assert.is(request.action, 'access.request');

  const email = address();
  const before = mail.mails.length;
  const asked = await first.client.requestAccess(seller, email, 'selling translations');
  assert.is(asked.status, 200, JSON.stringify(asked.body));
  assert.is(asked.body.sent, true);
  const message = await mail.mailTo(email, before);
  assert.match(message.subject, first.url);
  assert.match(message.text, seller.party);
  assert.match(message.text, /ten minutes/);
  const code = await mail.codeFor(email, before);
  const wrong = await first.client.verifyAccess(seller, code === '000000' ? '000001' : '000000');
  assert.is(wrong.status, 401);
  assert.is(errorOf(wrong), 'wrong_code');
  const right = await second.client.verifyAccess(seller, code); // any server of the deployment
  assert.equal(right.body, { mode: 'invite', party: seller.party, status: 'pending' });
  assert.is((await second.client.verifyAccess(seller, code)).status, 401, 'a code works once');
  assert.is((await first.client.accessOf(seller.party)).body.status, 'pending');
  assert.is((await first.client.create(seller, tradeSpec(seller, buyer))).status, 403, 'pending is not allowed');

  const queue = await first.client.adminAccess(admin, { action: 'pending' });
  assert.is(queue.status, 200, JSON.stringify(queue.body));
  const listed = queue.body.pending.find((p: { party: string }) => p.party === seller.party);
  assert.is(listed.email, email);
  assert.is(listed.useCase, 'selling translations');

  await allow(first, admin, seller.party);
  assert.is((await second.client.accessOf(seller.party)).body.status, 'allowed');
  const created = await first.client.create(seller, tradeSpec(seller, buyer));
  assert.is(created.status, 200, JSON.stringify(created.body));
  assert.not.ok((await first.client.adminAccess(admin, { action: 'pending' })).body.pending.some((p: { party: string }) => p.party === seller.party));

  const revoked = await first.client.adminAccess(admin, { action: 'revoke', target: seller.party, note: 'abuse' });
  assert.equal(revoked.body.status, 'revoked');
  const again = await second.client.create(seller, tradeSpec(seller, generateKeyPair()));
  assert.is(again.status, 403, 'the revoke holds on the other server at once');
  assert.is(errorOf(again), 'access_required');
  assert.is((again.body as unknown as { status: string }).status, 'revoked');
});

test('pre-approved addresses and domains are allowed at once; a denied address is sent nothing, and told the same', async ({ first, mail, admin }) => {
  assert.is((await first.client.adminAccess(admin, { action: 'allow-email', target: '@Good.Example' })).status, 200);
  const exact = address('elsewhere.example');
  assert.equal((await first.client.adminAccess(admin, { action: 'allow-email', target: exact })).body.rules.allow.includes(exact), true);
  assert.is(await verified(first, mail, generateKeyPair(), address('good.example')), 'allowed');
  assert.is(await verified(first, mail, generateKeyPair(), exact), 'allowed');

  const denied = address('good.example');
  await first.client.adminAccess(admin, { action: 'deny-email', target: denied });
  const key = generateKeyPair();
  const before = mail.mails.length;
  const asked = await first.client.requestAccess(key, denied);
  const welcome = address('good.example');
  const known = await first.client.requestAccess(generateKeyPair(), welcome);
  assert.equal(Object.keys(asked.body).sort(), Object.keys(known.body).sort(), 'the same answer');
  assert.is(asked.status, 200);
  await mail.mailTo(welcome, before); // sent after the denied one's would have been
  assert.not.ok(mail.mails.slice(before).some((m) => m.to === denied), 'nothing mailed to a denied address');
});

test('the gate comes after the signature and before payment: 401 for a forged call, 403 (not 402) for a fund', async ({ first, admin }) => {
  const seller = generateKeyPair();
  const buyer = generateKeyPair();
  await allow(first, admin, seller.party);
  const pact = (await first.client.create(seller, tradeSpec(seller, buyer))).body.pact;
  const forged = first.client.signedCall(buyer, 'pacts.fund', pact.id, pact.stateNonce, {});
  forged.sig = forged.sig.replace(/^./, (c) => (c === '0' ? '1' : '0'));
  const unsigned = await first.client.request('POST', `/pacts/${pact.id}/fund`, forged);
  assert.is(unsigned.status, 401);
  const fund = await first.client.request('POST', `/pacts/${pact.id}/fund`, first.client.signedCall(buyer, 'pacts.fund', pact.id, pact.stateNonce, {}));
  assert.is(fund.status, 403);
  assert.is(errorOf(fund), 'access_required');
  assert.is((await first.client.poke(pact.id)).status, 200, 'a poke needs no access');
});

test('every kind of signed write is gated: events, offers, blob uploads; a revoked party can still withdraw its deposit', async ({ first, admin }) => {
  const stranger = generateKeyPair();
  const event = publicEvent(stranger, { kind: 'hello', channel: 'general', body: {} }, first.now);
  assert.is(errorOf(await first.client.publishEvent(event)), 'access_required');
  assert.is(errorOf(await first.client.request('POST', '/offers', offerBy(stranger, first.now))), 'access_required');

  const seller = generateKeyPair();
  const buyer = generateKeyPair();
  await allow(first, admin, seller.party);
  await allow(first, admin, buyer.party);
  const pactId = (await first.client.create(seller, tradeSpec(seller, buyer))).body.pact.id as string;
  assert.is((await first.client.fund(buyer, pactId)).status, 200);
  assert.is((await first.client.putBlob(stranger, pactId, new Uint8Array([1, 2, 3]), { declareHash: true })).status, 403);
  await first.client.adminAccess(admin, { action: 'revoke', target: buyer.party });
  assert.is(errorOf(await first.client.putBlob(buyer, pactId, new Uint8Array([1, 2, 3]), { declareHash: true })), 'access_required');
  const out = await first.client.withdraw(buyer, pactId);
  assert.is(out.status, 200, `a way out stays open: ${JSON.stringify(out.body)}`);
});

test('an offer whose publisher was revoked can no longer be accepted (409), by anyone', async ({ first, admin }) => {
  const seller = generateKeyPair();
  const buyer = generateKeyPair();
  await allow(first, admin, seller.party);
  await allow(first, admin, buyer.party);
  const published = await first.client.request('POST', '/offers', offerBy(seller, first.now));
  assert.is(published.status, 200, JSON.stringify(published.body));
  await first.client.adminAccess(admin, { action: 'revoke', target: seller.party });
  const accepted = await first.client.acceptOffer(buyer, published.body.offer.offerId, 'after-revoke');
  assert.is(accepted.status, 409);
  assert.is(errorOf(accepted), 'offer_not_acceptable');
});

test('a party guessing codes is stopped: five wrong tries end the code; a sixth code in an hour is 429', async ({ first, mail }) => {
  const key = generateKeyPair();
  const email = address();
  const before = mail.mails.length;
  await first.client.requestAccess(key, email);
  const code = await mail.codeFor(email, before);
  const wrongs = ['111111', '222222', '333333', '444444', '555555', '666666'].filter((c) => c !== code).slice(0, 5);
  for (const wrong of wrongs) assert.is(errorOf(await first.client.verifyAccess(key, wrong)), 'wrong_code');
  const late = await first.client.verifyAccess(key, code);
  assert.is(late.status, 401, 'the right code after five wrong ones');
  for (let i = 0; i < 4; i++) assert.is((await first.client.requestAccess(key, address())).status, 200);
  const sixth = await first.client.requestAccess(key, address());
  assert.is(sixth.status, 429);
  assert.is(errorOf(sixth), 'rate_limited');
  assert.ok(Number(sixth.headers.get('retry-after')) > 0);
});

test('one client gets at most PACT_RATE_LIMIT_ACCESS codes an hour, whatever keys and addresses it uses', async ({ second }) => {
  for (let i = 0; i < 3; i++) assert.is((await second.client.requestAccess(generateKeyPair(), address())).status, 200);
  const over = await second.client.requestAccess(generateKeyPair(), address());
  assert.is(over.status, 429);
  assert.is(errorOf(over), 'rate_limited');
  assert.ok(Number(over.headers.get('retry-after')) > 0);
});

test('one address gets at most five codes an hour, whoever asks', async ({ first }) => {
  const email = address();
  for (let i = 0; i < 5; i++) assert.is((await first.client.requestAccess(generateKeyPair(), email)).status, 200);
  const over = await first.client.requestAccess(generateKeyPair(), email);
  assert.is(over.status, 429);
  assert.ok(Number(over.headers.get('retry-after')) > 0);
});

test('refusals: bad address 400, bad code 400, stateNonce 400, another action 401, stale 422, admin by another party 403, bad target 400', async ({ first, admin }) => {
  const key = generateKeyPair();
  const expect = async (response: Promise<{ status: number; body: unknown }>, status: number, error: string) => {
    const answer = await response;
    assert.is(answer.status, status, `${error}: ${JSON.stringify(answer.body)}`);
    assert.is(errorOf(answer), error);
  };
  await expect(first.client.requestAccess(key, 'not an address'), 400, 'invalid_request');
  await expect(first.client.requestAccess(key, `z,${address()}`), 400, 'invalid_request'); // no lists of addresses
  await expect(first.client.requestAccess(key, `Someone <${address()}>`), 400, 'invalid_request');
  await expect(first.client.verifyAccess(key, '12345'), 400, 'invalid_request');
  await expect(first.client.request('POST', '/access/request', first.client.signedCall(key, 'access.request', '', 1, { email: address() })), 400, 'invalid_request');
  await expect(first.client.request('POST', '/access/request', first.client.signedCall(key, 'access.verify', '', 0, { email: address() })), 401, 'invalid_signature');
  await expect(first.client.requestAccess(key, address(), undefined, Date.now() - 11 * 60_000), 422, 'stale_issuedAt');
  await expect(first.client.adminAccess(key, { action: 'allow', target: key.party }), 403, 'forbidden');
  await expect(first.client.adminAccess(admin, { action: 'allow', target: 'someone' }), 400, 'invalid_request');
  await expect(first.client.adminAccess(admin, { action: 'allow-email', target: 'nobody' }), 400, 'invalid_request');
  await expect(first.client.adminAccess(admin, { action: 'allow' }), 400, 'invalid_request');
  await expect(first.client.verifyAccess(key, '123456'), 401, 'wrong_code'); // no code asked for
  assert.is((await first.client.accessOf(key.party)).body.status, 'none', 'nothing refused changed anything');
});

test('a mail server that refuses: 503 mail_unavailable, and no code is left to guess', async ({ first, mail }) => {
  const key = generateKeyPair();
  mail.refuse = true;
  try {
    const failed = await first.client.requestAccess(key, address());
    assert.is(failed.status, 503, JSON.stringify(failed.body));
    assert.is(errorOf(failed), 'mail_unavailable');
  } finally {
    mail.refuse = false;
  }
  assert.is(errorOf(await first.client.verifyAccess(key, '123456')), 'wrong_code');
  assert.is((await first.client.accessOf(key.party)).body.status, 'none');
});

test('invite mode without SMTP or an operator does not start, and says why', async () => {
  for (const [env, needs] of [[{ PACT_ACCESS_MODE: 'invite', PACT_ADMIN_PARTY: generateKeyPair().party }, 'PACT_SMTP_URL'], [{ PACT_ACCESS_MODE: 'invite', PACT_SMTP_URL: 'smtp://127.0.0.1:1' }, 'PACT_ADMIN_PARTY']] as const) {
    await Stack.start({ env }).then(
      async (stack) => {
        await stack.stop();
        assert.unreachable('an invite-mode server started without what it needs');
      },
      (error: unknown) => assert.match(String(error), needs),
    );
  }
});

test('an operator call is applied once: the same signed allow sent again after a revoke is refused', async ({ first, admin }) => {
  const party = generateKeyPair().party;
  const allowCall = first.client.signedCall(admin, 'access.admin', '', 0, { action: 'allow', target: party });
  assert.is((await first.client.request('POST', '/access/admin', allowCall)).status, 200);
  await first.client.adminAccess(admin, { action: 'revoke', target: party });
  const replayed = await first.client.request('POST', '/access/admin', allowCall);
  assert.is(replayed.status, 409);
  assert.is((await first.client.accessOf(party)).body.status, 'revoked');
  const rulesCall = first.client.signedCall(admin, 'access.admin', '', 0, { action: 'allow-email', target: '@replay.example' });
  assert.is((await first.client.request('POST', '/access/admin', rulesCall)).status, 200);
  assert.is((await first.client.request('POST', '/access/admin', rulesCall)).status, 409);
});

test('a request for a denied address counts against the party like any other', async ({ first, admin }) => {
  const denied = address('denied.example');
  await first.client.adminAccess(admin, { action: 'deny-email', target: '@denied.example' });
  const key = generateKeyPair();
  for (let i = 0; i < 4; i++) assert.is((await first.client.requestAccess(key, address())).status, 200);
  assert.is((await first.client.requestAccess(key, denied)).status, 200);
  assert.is((await first.client.requestAccess(key, address())).status, 429);
});

test('with NATS away, access answers 503 (never 500), and writes are refused, not let through', async ({ first }) => {
  const key = generateKeyPair();
  await first.natsOutage(async () => {
    // at once: each waits out the NATS request timeout before its 503
    const answers = await Promise.all([first.client.accessOf(key.party), first.client.requestAccess(key, address()), first.client.publishEvent(publicEvent(key, { kind: 'k', channel: 'c', body: {} }, first.now))]);
    for (const answer of answers) assert.is(answer.status, 503, JSON.stringify(answer.body));
  });
  for (let tries = 0; tries < 100 && (await first.client.accessOf(key.party)).status !== 200; tries++) await new Promise((resolve) => setTimeout(resolve, 200));
  assert.is((await first.client.accessOf(key.party)).status, 200, 'back once NATS is');
});

test('a code expires after ten minutes', async ({ first, mail }) => {
  const key = generateKeyPair();
  const email = address();
  const before = mail.mails.length;
  await first.client.requestAccess(key, email);
  const code = await mail.codeFor(email, before);
  await first.advanceClock(10 * 60_000 + 1_000); // the server clock only moves on: this test runs last
  assert.is(errorOf(await first.client.verifyAccess(key, code)), 'wrong_code');
});

test.run();
