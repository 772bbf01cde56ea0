import { connect as connectTcp } from 'node:net';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_PROPOSAL_BYTES, MAX_TERMS_BYTES } from '../../machines/pact/limits.js';
import type { Pact } from '../../machines/pact/types.js';
import type { PartyId } from '../../protocol/party.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';
import { activePact } from '../support/trades.js';

// Input an attacker sends to crash, bloat or fool the service: every case is a clear 4xx, nothing changes,
// and the server goes on answering. Real server process.

const CONNECTION_TIMEOUT_MS = 1_500;
const test = suite<{ stack: Stack }>('hostile input');

test.before(async (context) => {
  context.stack = await Stack.start({ env: { PACT_CONNECTION_TIMEOUT_MS: String(CONNECTION_TIMEOUT_MS) } });
});
test.after(async ({ stack }) => {
  await stack.stop();
});

/** The identity point: a "key" that verifies one constant signature for any message. */
const IDENTITY: PartyId = 'ed25519:4uQeVj5tqViQh7yWWGStvkEG1Zmhx6uasJtWCJziofM';
const IDENTITY_SIG = `01${'00'.repeat(63)}`;

async function raw(stack: Stack, path: string, body: Buffer | string): Promise<{ status: number; body: any }> {
  const response = await fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: new Uint8Array(Buffer.from(body)) });
  return { status: response.status, body: await response.json() };
}

const pactOf = async (stack: Stack, id: string) => (await stack.client.get(id)).body.pact as Pact;

test('a small-order key is no party id, and its constant signature is no signature', async ({ stack }) => {
  const { seller, buyer } = newParties();
  const spec = tradeSpec(seller, buyer);
  spec.parties[1] = { ...spec.parties[1]!, party: IDENTITY };
  const named = await stack.client.create(seller, spec);
  assert.is(named.status, 400, JSON.stringify(named.body));
  assert.is((named.body as any).field, 'call.parties.1.party');

  const call = { action: 'pacts.create', call: tradeSpec(seller, buyer), pactId: '', stateNonce: 0, issuedAt: stack.now, signer: IDENTITY, sig: IDENTITY_SIG };
  const signed = await stack.client.request('POST', '/pacts', call);
  assert.is(signed.status, 401, JSON.stringify(signed.body));
  assert.is(signed.body.error, 'invalid_signature');
});

test('lone surrogates anywhere in a string are 400, never 500', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  const before = await pactOf(stack, id);
  const spec = tradeSpec(seller, buyer);
  // No signer can sign these (JCS has no form for them), so the signature is any 128 hex characters.
  const unsigned = (action: string, pactId: string, signer: PartyId, call: unknown) =>
    JSON.stringify({ action, call, pactId, stateNonce: before.stateNonce, issuedAt: stack.now, signer, sig: 'ab'.repeat(64) });
  const cases: [string, string][] = [
    ['/pacts', unsigned('pacts.create', '', seller.party, { ...spec, terms: { spec: 'x\ud800y' } })],
    ['/pacts', unsigned('pacts.create', '', seller.party, { ...spec, terms: { spec: 'x', '\udc00': 1 } })],
    [`/pacts/${id}/propose`, unsigned('pacts.propose', id, seller.party, { evidence: [{ note: '\ud83d' }], distribution: [{ party: seller.party, bp: 10_000 }] })],
    [`/pacts/${id}/object`, unsigned('pacts.object', id, buyer.party, { reason: 'bad\udfff' })],
  ];
  for (const [path, body] of cases) {
    const response = await raw(stack, path, body);
    assert.is(response.status, 400, `${path}: ${JSON.stringify(response.body)}`);
    assert.is(response.body.error, 'invalid_request');
  }
  assert.equal(await pactOf(stack, id), before);
});

test('a groupId holding the read model\'s index separator is 400', async ({ stack }) => {
  const { seller, buyer } = newParties();
  const created = await stack.client.create(seller, tradeSpec(seller, buyer, { groupId: 'G!000000000000000' }));
  assert.is(created.status, 400, JSON.stringify(created.body));
  assert.is((await stack.client.list({ groupId: 'G!0' })).status, 400);
});

test('a URL that cannot be decoded is 404 in the one error shape', async ({ stack }) => {
  const response = await fetch(`${stack.url}/pacts/%zz`);
  assert.is(response.status, 404);
  assert.is((await response.json()).error, 'not_found');
});

test('deep nesting is 400, never 500', async ({ stack }) => {
  const { seller, buyer } = newParties();
  let deep: unknown = 'bottom';
  for (let i = 0; i < 2_000; i++) deep = { d: deep };
  const call = stack.client.signedCall(seller, 'pacts.create', '', 0, { ...tradeSpec(seller, buyer), terms: { spec: 'deep', deep } });
  const response = await raw(stack, '/pacts', JSON.stringify(call));
  assert.is(response.status, 400, JSON.stringify(response.body));
  assert.match(response.body.message, /deeper/);
});

test('a body that is not UTF-8 is 400: invalid bytes never become replacement characters', async ({ stack }) => {
  const { seller, buyer } = newParties();
  const text = JSON.stringify(stack.client.signedCall(seller, 'pacts.create', '', 0, { ...tradeSpec(seller, buyer), terms: { spec: 'AAAA' } }));
  const bytes = Buffer.from(text, 'utf8');
  bytes.fill(0xff, bytes.indexOf('AAAA'), bytes.indexOf('AAAA') + 4);
  const response = await raw(stack, '/pacts', bytes);
  assert.is(response.status, 400, JSON.stringify(response.body));
  assert.match(response.body.message, /UTF-8/);
});

test('terms or a proposal larger than the pact keeps are 413, before anything is signed or stored', async ({ stack }) => {
  const { seller, buyer, id } = await activePact(stack);
  const before = await pactOf(stack, id);
  const bigTerms = { spec: 'big', appendix: 'é'.repeat(MAX_TERMS_BYTES / 2) }; // 2 bytes each in UTF-8
  const created = await stack.client.create(seller, { ...tradeSpec(seller, buyer), terms: bigTerms });
  assert.is(created.status, 413, JSON.stringify(created.body));
  assert.equal([(created.body as any).error, (created.body as any).field], ['too_large', 'call.terms']);

  const notes = Array.from({ length: 20 }, () => ({ note: 'n'.repeat(Math.ceil(MAX_PROPOSAL_BYTES / 20)) }));
  const proposed = await stack.client.propose(seller, id, { evidence: notes, distribution: [{ party: seller.party, bp: 10_000 }] });
  assert.is(proposed.status, 413, JSON.stringify(proposed.body));
  assert.equal(await pactOf(stack, id), before);
});

test('a connection that declares a body and never sends it is closed', async ({ stack }) => {
  const { port } = new URL(stack.url);
  const socket = connectTcp(Number(port), '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write('POST /pacts HTTP/1.1\r\nHost: x\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n');
  const started = Date.now();
  const closed = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), CONNECTION_TIMEOUT_MS * 4);
    socket.once('close', () => (clearTimeout(timer), resolve(true)));
    socket.resume();
  });
  socket.destroy();
  assert.ok(closed, `still open after ${Date.now() - started} ms`);
  assert.is((await stack.client.request('GET', '/health')).status, 200, 'the server still answers');
});

test.run();
