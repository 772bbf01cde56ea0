import { randomBytes } from 'node:crypto';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { HttpResult } from '../../client/pact-client.js';
import type { Pact, Share } from '../../machines/pact/types.js';
import { canonicalHashHex } from '../../protocol/digest.js';
import { generateKeyPair, signed, signPayload, type KeyPair } from '../../protocol/sign.js';
import { signedPart, type Action } from '../../protocol/signed-call.js';
import { usdc } from '../support/pacts.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// Bad input of every kind gets the status the spec gives it, a stable `error` code and a `message`
// (DECISIONS, Errors), and changes nothing: after each refusal the pact reads as before, a refused create
// leaves no pact at the id it would have had, and a refused fund collects nothing on the mock rail.
// Every tampered body is signed again, so that the one thing wrong with it is the thing under test; where
// it matters, the untampered call is sent afterwards and must succeed, so the refusal cannot come from a
// broken fixture.

const HOUR = 3_600_000;
const MINUTE = 60_000;
const BUYER_OWES = '1076'; // tradeSpec: the buyer's deposit 1001 + bond 75

const test = suite('bad input over HTTP: refused with the right status and code, nothing changes');
let stack: Stack;

test.before(async () => {
  stack = await Stack.start();
});
test.after(async () => {
  await stack.stop();
});

// ---------------------------------------------------------------------------------------------------
// Requests

type Body = Record<string, any>;
type Details = Record<string, unknown>;

const post = (path: string, body?: unknown, headers?: Record<string, string>) => stack.client.request('POST', path, body, headers);
const get = (path: string) => stack.client.request('GET', path);
const at = (id: string, verb: string) => `/pacts/${id}/${verb}`;

const envelope = (key: KeyPair, action: Action, pactId: string, stateNonce: number, call: unknown): Body =>
  stack.client.signedCall(key, action, pactId, stateNonce, call);

/** `body` with `change` applied to its signed part, signed again by `key`: only the change is wrong. */
function resigned(body: Body, change: (unsigned: Body) => void, key: KeyPair): Body {
  const unsigned: Body = structuredClone(signedPart(body as Body & { sig: string }));
  change(unsigned);
  return signed(unsigned, key);
}

const flipHex = (hex: string) => (hex[0] === '0' ? '1' : '0') + hex.slice(1);
/** The same body with one hex character of its signature changed. */
const forged = (body: Body): Body => ({ ...body, sig: flipHex(body.sig) });

const base64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64');
const MOCK_PROOF = { 'x-payment': JSON.stringify({ scheme: 'mock' }) };

/** The server's clock, read through the test hook (which also runs the keeper; nothing is due then). */
const serverNow = () => stack.advanceClock(0);

const unknownPactId = () => `p_${randomBytes(16).toString('hex')}`;

// ---------------------------------------------------------------------------------------------------
// Assertions

/** The one error shape: status, stable code, words for people, and any details named. */
function assertError(res: HttpResult, status: number, code: string, details: Details = {}): Body {
  const seen = `expected ${status} ${code}, got ${res.status} ${JSON.stringify(res.body)}`;
  assert.is(res.status, status, seen);
  assert.is(res.body?.error, code, seen);
  assert.type(res.body.message, 'string', seen);
  assert.ok(res.body.message.length > 0, seen);
  for (const [name, value] of Object.entries(details)) assert.equal(res.body[name], value, `${name}: ${seen}`);
  return res.body;
}

function assertOk(res: HttpResult<{ pact: Pact }>): Pact {
  assert.is(res.status, 200, JSON.stringify(res.body));
  return res.body.pact;
}

async function pactOf(id: string): Promise<Pact> {
  return assertOk(await stack.client.get(id));
}

/** What a refused call must leave alone. */
const view = (pact: Pact) => ({
  state: pact.state,
  stateNonce: pact.stateNonce,
  parties: pact.parties,
  proposal: pact.proposal,
  inputHash: pact.inputHash,
  cosigns: pact.cosigns,
  objection: pact.objection,
  verdict: pact.verdict,
});

/** Sends, expects the error, and checks that the pact reads exactly as before. */
async function refused(id: string, send: () => Promise<HttpResult>, status: number, code: string, details: Details = {}) {
  const before = view(await pactOf(id));
  const body = assertError(await send(), status, code, details);
  assert.equal(view(await pactOf(id)), before, `the pact changed although the call was refused with ${code}`);
  return body;
}

const collectsBy = async (party: KeyPair) =>
  (await stack.ledger()).operations.filter((op) => op.kind === 'collect' && op.from === party.party).length;

/** A refused fund also collects nothing from the payer. */
async function refusedFund(id: string, payer: KeyPair, send: () => Promise<HttpResult>, status: number, code: string, details: Details = {}) {
  const collected = await collectsBy(payer);
  const body = await refused(id, send, status, code, details);
  assert.is(await collectsBy(payer), collected, `a fund refused with ${code} collected money from the payer`);
  return body;
}

/** The id the server derives from a create envelope. */
const pactIdOf = (body: Body) => `p_${canonicalHashHex(signedPart(body as Body & { sig: string })).slice(0, 32)}`;

/** A refused create leaves no pact behind at the id it would have had. */
async function refusedCreate(body: unknown, status: number, code: string, details: Details = {}) {
  const answer = assertError(await post('/pacts', body), status, code, details);
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    assert.is((await stack.client.get(pactIdOf(body as Body))).status, 404, `a create refused with ${code} made a pact`);
  }
  return answer;
}

// ---------------------------------------------------------------------------------------------------
// Pacts in each state

/** A valid, not yet sent create envelope for a fresh seller and buyer. */
function createCall() {
  const { seller, buyer } = newParties();
  return { seller, buyer, body: envelope(seller, 'pacts.create', '', 0, tradeSpec(seller, buyer)) };
}

async function createdPact() {
  const { seller, buyer, body } = createCall();
  const id = assertOk(await post('/pacts', body)).id;
  return { seller, buyer, id };
}

async function activePact() {
  const pact = await createdPact();
  assertOk(await stack.client.fund(pact.seller, pact.id));
  assert.is(assertOk(await stack.client.fund(pact.buyer, pact.id)).state, 'ACTIVE');
  return pact;
}

const halves = (a: KeyPair, b: KeyPair): Share[] => [{ party: a.party, bp: 5000 }, { party: b.party, bp: 5000 }];
const proposal = (distribution: Share[]) => ({ evidence: [{ note: 'delivered' }], distribution });

async function proposedPact() {
  const pact = await activePact();
  assert.is(assertOk(await stack.client.propose(pact.seller, pact.id, proposal(halves(pact.seller, pact.buyer)))).state, 'PROPOSED');
  return pact;
}

async function disputedPact() {
  const pact = await proposedPact();
  const disputed = assertOk(await stack.client.object(pact.buyer, pact.id, 'the summary has 900 words'));
  assert.is(disputed.state, 'DISPUTED');
  return { ...pact, inputHash: disputed.inputHash! };
}

/** Three required parties, `a` proposing: one cosign or objection by `b` leaves `c` still to answer. */
async function proposedThreeWay() {
  const [a, b, c] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
  const spec = tradeSpec(a, b, {
    parties: [...tradeSpec(a, b).parties, { party: c.party, deposit: usdc(400), bond: usdc(30), required: true }],
    minParties: 3,
  });
  const id = assertOk(await stack.client.create(a, spec)).id;
  for (const key of [a, b, c]) assertOk(await stack.client.fund(key, id));
  const distribution = [{ party: a.party, bp: 3334 }, { party: b.party, bp: 3333 }, { party: c.party, bp: 3333 }];
  assert.is(assertOk(await stack.client.propose(a, id, proposal(distribution))).state, 'PROPOSED');
  return { a, b, c, id };
}

/** A `pacts.cancel` call submitted by `submitter` carrying the approvals of `approvers`. */
function cancelCall(submitter: KeyPair, id: string, stateNonce: number, approvers: KeyPair[], expiresAt: number): Body {
  const approval = { action: 'cancel', pactId: id, stateNonce, expiresAt };
  const sigs = approvers.map((a) => ({ signer: a.party, sig: signPayload(approval, a) }));
  return envelope(submitter, 'pacts.cancel', id, stateNonce, { expiresAt, sigs });
}

function verdictCall(key: KeyPair, pactId: string, inputHash: string, distribution: Share[], feeFrom = 'objector'): Body {
  return signed({ pactId, inputHash, distribution, feeFrom, issuedAt: stack.now, signer: key.party }, key);
}

// ===================================================================================================
// Bodies that are not JSON, not objects, too large

test('malformed JSON: 400 invalid_request on create and on a pact route, nothing changes', async () => {
  await refusedCreate('{"action": "pacts.create",', 400, 'invalid_request');
  const { buyer, id } = await proposedPact();
  const body = JSON.stringify(envelope(buyer, 'pacts.cosign', id, await stack.client.nonceOf(id), {}));
  await refused(id, () => post(at(id, 'cosign'), body.slice(0, -1)), 400, 'invalid_request');
  assertOk(await post(at(id, 'cosign'), body));
});

test('a body that is not a JSON object: 400 invalid_request', async () => {
  const { id } = await proposedPact();
  for (const body of ['[]', '"pacts.cosign"', '42', 'true', 'null']) {
    await refusedCreate(body, 400, 'invalid_request');
    await refused(id, () => post(at(id, 'cosign'), body), 400, 'invalid_request');
  }
});

test('no body, or a body sent as text/plain: 400 invalid_request', async () => {
  const { body } = createCall();
  await refusedCreate(undefined, 400, 'invalid_request');
  assertError(await post('/pacts', JSON.stringify(body), { 'content-type': 'text/plain' }), 400, 'invalid_request');
  assert.is((await stack.client.get(pactIdOf(body))).status, 404);
});

test('a body over 256 KiB: 413 too_large, on create and on a pact route', async () => {
  const { seller, body } = createCall();
  const padded = resigned(body, (b) => (b.call.terms.appendix = 'x'.repeat(300 * 1024)), seller);
  await refusedCreate(padded, 413, 'too_large');
  const { buyer, id } = await proposedPact();
  const objection = envelope(buyer, 'pacts.object', id, await stack.client.nonceOf(id), { reason: 'x'.repeat(300 * 1024) });
  await refused(id, () => post(at(id, 'object'), objection), 413, 'too_large');
});

// ===================================================================================================
// Envelopes: missing fields, wrong types, unknown fields (on a pact route, then the valid call succeeds)

const ENVELOPE_FIELDS = ['action', 'call', 'pactId', 'stateNonce', 'issuedAt', 'signer', 'sig'] as const;

for (const field of ENVELOPE_FIELDS) {
  test(`an envelope without ${field}: 400 invalid_request naming it`, async () => {
    const { buyer, id } = await proposedPact();
    const valid = envelope(buyer, 'pacts.cosign', id, await stack.client.nonceOf(id), {});
    const { sig: _sig, ...unsigned } = valid;
    const body = field === 'sig' ? unsigned : resigned(valid, (b) => delete b[field], buyer);
    await refused(id, () => post(at(id, 'cosign'), body), 400, 'invalid_request', { field });
    assertOk(await post(at(id, 'cosign'), valid));
  });
}

const ENVELOPE_TAMPERINGS: [name: string, change: (b: Body) => void, field: string][] = [
  ['stateNonce as a string', (b) => (b.stateNonce = String(b.stateNonce)), 'stateNonce'],
  ['stateNonce as a float', (b) => (b.stateNonce += 0.5), 'stateNonce'],
  ['a negative stateNonce', (b) => (b.stateNonce = -1), 'stateNonce'],
  ['issuedAt as a float', (b) => (b.issuedAt += 0.5), 'issuedAt'],
  ['issuedAt as a string', (b) => (b.issuedAt = String(b.issuedAt)), 'issuedAt'],
  ['a signer that is not a party id', (b) => (b.signer = 'alice'), 'signer'],
  ['a call that is not an object', (b) => (b.call = 'cosign'), 'call'],
  ['an unknown field in the call', (b) => (b.call.extra = true), 'call.extra'],
  ['an unknown field in the envelope', (b) => (b.extra = 1), 'extra'],
];

for (const [name, change, field] of ENVELOPE_TAMPERINGS) {
  test(`an envelope with ${name}: 400 invalid_request (field ${field})`, async () => {
    const { buyer, id } = await proposedPact();
    const valid = envelope(buyer, 'pacts.cosign', id, await stack.client.nonceOf(id), {});
    await refused(id, () => post(at(id, 'cosign'), resigned(valid, change, buyer)), 400, 'invalid_request', { field });
    assertOk(await post(at(id, 'cosign'), valid));
  });
}

test('a signature that is not 128 lowercase hex characters: 400 invalid_request', async () => {
  const { buyer, id } = await proposedPact();
  const valid = envelope(buyer, 'pacts.cosign', id, await stack.client.nonceOf(id), {});
  for (const sig of [valid.sig.toUpperCase(), valid.sig.slice(2), `${valid.sig}00`, Buffer.from(valid.sig, 'hex').toString('base64')]) {
    await refused(id, () => post(at(id, 'cosign'), { ...valid, sig }), 400, 'invalid_request', { field: 'sig' });
  }
});

// ===================================================================================================
// Create: the pact spec

const SPEC_TAMPERINGS: [name: string, change: (b: Body) => void, field: string][] = [
  ['no rail', (b) => delete b.call.rail, 'call.rail'],
  ['no parties', (b) => delete b.call.parties, 'call.parties'],
  ['no terms', (b) => delete b.call.terms, 'call.terms'],
  ['no terms.spec', (b) => delete b.call.terms.spec, 'call.terms.spec'],
  ['no minParties', (b) => delete b.call.minParties, 'call.minParties'],
  ['a party entry without bond', (b) => delete b.call.parties[0].bond, 'call.parties.0.bond'],
  ['an amount as a number', (b) => (b.call.parties[1].deposit.amount = 1001), 'call.parties.1.deposit.amount'],
  ['an amount with decimals', (b) => (b.call.parties[1].deposit.amount = '10.5'), 'call.parties.1.deposit.amount'],
  ['a negative amount', (b) => (b.call.parties[1].bond.amount = '-1'), 'call.parties.1.bond.amount'],
  ['an amount with a leading zero', (b) => (b.call.parties[1].bond.amount = '075'), 'call.parties.1.bond.amount'],
  ['an amount in exponent form', (b) => (b.call.parties[1].deposit.amount = '1e3'), 'call.parties.1.deposit.amount'],
  ['required as a string', (b) => (b.call.parties[0].required = 'true'), 'call.parties.0.required'],
  ['minParties as a float', (b) => (b.call.minParties = 1.5), 'call.minParties'],
  ['a rail that does not exist', (b) => (b.call.rail = 'paypal'), 'call.rail'],
  ['a party id that is not ed25519:<base58>', (b) => (b.call.parties[1].party = 'ed25519:not-a-key'), 'call.parties.1.party'],
  ['a window of zero', (b) => (b.call.windows = { fund: 0 }), 'call.windows.fund'],
  ['a window as a float', (b) => (b.call.windows = { perform: 1.5 * HOUR + 0.5 }), 'call.windows.perform'],
  ['a party listed twice', (b) => (b.call.parties[1].party = b.call.parties[0].party), 'call.parties'],
  ['two assets in one pact', (b) => (b.call.parties[1].bond.asset = 'EURC'), 'call.parties'],
  ['minParties above the number of parties', (b) => (b.call.minParties = 3), 'call.minParties'],
  ['a proposer who is not a party', (b) => (b.call.proposer = generateKeyPair().party), 'call.proposer'],
  ['an unknown field in the spec', (b) => (b.call.color = 'red'), 'call.color'],
  ['an unknown field in a party entry', (b) => (b.call.parties[0].note = 'hi'), 'call.parties.0.note'],
  ['an unknown field in Money', (b) => (b.call.parties[0].bond.decimals = 6), 'call.parties.0.bond.decimals'],
  ['an unknown window', (b) => (b.call.windows = { verdict: HOUR }), 'call.windows.verdict'],
];

for (const [name, change, field] of SPEC_TAMPERINGS) {
  test(`create with ${name}: 400 invalid_request (field ${field}), no pact`, async () => {
    const { seller, body } = createCall();
    await refusedCreate(resigned(body, change, seller), 400, 'invalid_request', { field });
    assertOk(await post('/pacts', body));
  });
}

test('create overriding the evaluator policy: 400 evaluator_policy_is_server_owned; evaluator {} is accepted', async () => {
  const { seller, body } = createCall();
  const overrides = [{ model: 'x' }, { onFailure: 'refund' }, { pubkey: seller.party }, { timeoutMs: HOUR }];
  for (const evaluator of overrides) {
    await refusedCreate(resigned(body, (b) => (b.call.evaluator = evaluator), seller), 400, 'evaluator_policy_is_server_owned');
  }
  const pact = assertOk(await post('/pacts', resigned(body, (b) => (b.call.evaluator = {}), seller)));
  assert.is(pact.evaluator.pubkey, stack.evaluator.party);
});

test('create with issuedAt 11 minutes old: 422 stale_issuedAt; 11 minutes ahead: 422 too_early', async () => {
  const now = Date.now();
  const { seller, body } = createCall();
  await refusedCreate(resigned(body, (b) => (b.issuedAt = now - 11 * MINUTE), seller), 422, 'stale_issuedAt');
  await refusedCreate(resigned(body, (b) => (b.issuedAt = now + 11 * MINUTE), seller), 422, 'too_early');
  assertOk(await post('/pacts', resigned(body, (b) => (b.issuedAt = now), seller)));
});

test('issuedAt is judged by the wall clock: after the test clock moves two hours, a call stamped Date.now() is fresh', async () => {
  await stack.advanceClock(2 * HOUR);
  const { seller, body } = createCall();
  const stamped = resigned(body, (b) => (b.issuedAt = Date.now()), seller);
  assertOk(await post('/pacts', stamped));
  await refusedCreate(resigned(body, (b) => (b.issuedAt = stack.now), seller), 422, 'too_early');
});

test('create replayed: 200 with the same pact, stateNonce unchanged, also after a fund', async () => {
  const { seller, body } = createCall();
  const first = assertOk(await post('/pacts', body));
  const again = assertOk(await post('/pacts', body));
  assert.is(again.id, first.id);
  assert.is(again.stateNonce, 0);
  assert.equal(view(await pactOf(first.id)), view(first));
  const funded = assertOk(await stack.client.fund(seller, first.id));
  assert.equal(view(assertOk(await post('/pacts', body))), view(funded));
  assert.equal(view(await pactOf(first.id)), view(funded));
});

test('create with a forged signature, a foreign signer or a pactId: 401 invalid_signature', async () => {
  const { seller, buyer, body } = createCall();
  await refusedCreate(forged(body), 401, 'invalid_signature');
  await refusedCreate(resigned(body, (b) => (b.signer = buyer.party), seller), 401, 'invalid_signature');
  await refusedCreate(resigned(body, () => undefined, buyer), 401, 'invalid_signature');
  await refusedCreate(resigned(body, (b) => (b.pactId = unknownPactId()), seller), 401, 'invalid_signature');
  await refusedCreate(resigned(body, (b) => (b.action = 'pacts.fund'), seller), 401, 'invalid_signature');
});

// ===================================================================================================
// Signatures on pact routes

test('a forged signature (one hex character flipped): 401 invalid_signature', async () => {
  const { buyer, id } = await proposedPact();
  const valid = envelope(buyer, 'pacts.cosign', id, await stack.client.nonceOf(id), {});
  await refused(id, () => post(at(id, 'cosign'), forged(valid)), 401, 'invalid_signature');
  const tamperedAfterSigning = { ...valid, issuedAt: valid.issuedAt + 1 };
  await refused(id, () => post(at(id, 'cosign'), tamperedAfterSigning), 401, 'invalid_signature');
  assertOk(await post(at(id, 'cosign'), valid));
});

test('a signature by another key than `signer`: 401 invalid_signature', async () => {
  const { seller, buyer, id } = await proposedPact();
  const valid = envelope(buyer, 'pacts.cosign', id, await stack.client.nonceOf(id), {});
  for (const key of [seller, generateKeyPair()]) {
    await refused(id, () => post(at(id, 'cosign'), resigned(valid, () => undefined, key)), 401, 'invalid_signature');
  }
});

const WRONG_ACTIONS: [action: Action, call: unknown, route: string][] = [
  ['pacts.cosign', {}, 'object'],
  ['pacts.object', { reason: 'late' }, 'cosign'],
  ['pacts.withdraw', {}, 'cosign'],
  ['pacts.cosign', {}, 'fund'],
  ['pacts.cosign', {}, 'cancel'],
  ['pacts.steal' as Action, {}, 'cosign'],
];

for (const [action, call, route] of WRONG_ACTIONS) {
  test(`a ${action} envelope sent to /${route}: 401 invalid_signature`, async () => {
    const { buyer, id } = await proposedPact();
    const body = envelope(buyer, action, id, await stack.client.nonceOf(id), call);
    await refused(id, () => post(at(id, route), body), 401, 'invalid_signature');
  });
}

test('an envelope signed for another pact: 401 invalid_signature', async () => {
  const { buyer, id } = await proposedPact();
  const other = await proposedPact();
  const nonce = await stack.client.nonceOf(id);
  await refused(id, () => post(at(id, 'cosign'), envelope(buyer, 'pacts.cosign', other.id, nonce, {})), 401, 'invalid_signature');
  // and the other way: the other pact's own party, its own pact id, sent to this pact
  await refused(id, () => post(at(id, 'cosign'), envelope(other.buyer, 'pacts.cosign', other.id, nonce, {})), 401, 'invalid_signature');
  assert.is((await pactOf(other.id)).state, 'PROPOSED');
});

// ===================================================================================================
// stateNonce

test('a stale or future stateNonce: 409 stateNonce_mismatch with currentNonce', async () => {
  const { buyer, id } = await proposedPact();
  const nonce = await stack.client.nonceOf(id);
  for (const stale of [0, nonce - 1, nonce + 1]) {
    const body = envelope(buyer, 'pacts.cosign', id, stale, {});
    await refused(id, () => post(at(id, 'cosign'), body), 409, 'stateNonce_mismatch', { currentNonce: nonce });
  }
});

test('a reused cosign (the exact applied body again): 409 stateNonce_mismatch, nothing changes', async () => {
  const { b, id } = await proposedThreeWay();
  const cosign = envelope(b, 'pacts.cosign', id, await stack.client.nonceOf(id), {});
  const applied = assertOk(await post(at(id, 'cosign'), cosign));
  assert.is(applied.state, 'PROPOSED');
  await refused(id, () => post(at(id, 'cosign'), cosign), 409, 'stateNonce_mismatch', { currentNonce: applied.stateNonce });
  assert.is((await pactOf(id)).cosigns.length, 1);
});

test('a reused fund (the exact paid request again): 409 stateNonce_mismatch, no second collect', async () => {
  const { seller, id } = await createdPact();
  const fund = envelope(seller, 'pacts.fund', id, 0, {});
  const applied = assertOk(await post(at(id, 'fund'), fund, MOCK_PROOF));
  assert.is(await collectsBy(seller), 1);
  await refusedFund(id, seller, () => post(at(id, 'fund'), fund, MOCK_PROOF), 409, 'stateNonce_mismatch', { currentNonce: applied.stateNonce });
  await refusedFund(id, seller, () => post(at(id, 'fund'), fund), 409, 'stateNonce_mismatch', { currentNonce: applied.stateNonce });
  assert.is(await collectsBy(seller), 1);
});

// ===================================================================================================
// Authorization

test('fund by a key that is not in the pact: 403 forbidden, with or without proof, nothing collected', async () => {
  const { id } = await createdPact();
  const outsider = generateKeyPair();
  const fund = envelope(outsider, 'pacts.fund', id, 0, {});
  await refusedFund(id, outsider, () => post(at(id, 'fund'), fund), 403, 'forbidden');
  await refusedFund(id, outsider, () => post(at(id, 'fund'), fund, MOCK_PROOF), 403, 'forbidden');
  assert.is(await collectsBy(outsider), 0);
});

test('propose by a party that is not the proposer: 403 forbidden', async () => {
  const { buyer, seller, id } = await activePact();
  const nonce = await stack.client.nonceOf(id);
  for (const key of [buyer, generateKeyPair()]) {
    const body = envelope(key, 'pacts.propose', id, nonce, proposal(halves(seller, buyer)));
    await refused(id, () => post(at(id, 'propose'), body), 403, 'forbidden');
  }
});

test('cosign or object by the proposer or an outsider: 403 forbidden', async () => {
  const { seller, id } = await proposedPact();
  const nonce = await stack.client.nonceOf(id);
  for (const key of [seller, generateKeyPair()]) {
    await refused(id, () => post(at(id, 'cosign'), envelope(key, 'pacts.cosign', id, nonce, {})), 403, 'forbidden');
    await refused(id, () => post(at(id, 'object'), envelope(key, 'pacts.object', id, nonce, { reason: 'no' })), 403, 'forbidden');
  }
});

test('withdraw by a party that has not funded: 403 forbidden', async () => {
  const { seller, buyer, id } = await createdPact();
  assertOk(await stack.client.fund(seller, id));
  const body = envelope(buyer, 'pacts.withdraw', id, await stack.client.nonceOf(id), {});
  await refused(id, () => post(at(id, 'withdraw'), body), 403, 'forbidden');
});

// ===================================================================================================
// State

test('propose before the pact is active: 409 invalid_state', async () => {
  const { seller, buyer, id } = await createdPact();
  const body = envelope(seller, 'pacts.propose', id, 0, proposal(halves(seller, buyer)));
  await refused(id, () => post(at(id, 'propose'), body), 409, 'invalid_state');
});

test('withdraw after activation: 409 invalid_state, nothing refunded', async () => {
  const { buyer, id } = await activePact();
  const body = envelope(buyer, 'pacts.withdraw', id, await stack.client.nonceOf(id), {});
  await refused(id, () => post(at(id, 'withdraw'), body), 409, 'invalid_state');
  assert.equal((await pactOf(id)).payouts, []);
});

test('a second fund by a funded party while CREATED: 409 already_funded, nothing collected', async () => {
  const { seller, id } = await createdPact();
  assertOk(await stack.client.fund(seller, id));
  const again = envelope(seller, 'pacts.fund', id, await stack.client.nonceOf(id), {});
  await refusedFund(id, seller, () => post(at(id, 'fund'), again), 409, 'already_funded');
  await refusedFund(id, seller, () => post(at(id, 'fund'), again, MOCK_PROOF), 409, 'already_funded');
});

test('a second fund by a funded party once ACTIVE: 409 already_funded (final), nothing collected', async () => {
  const { buyer, id } = await activePact();
  const again = envelope(buyer, 'pacts.fund', id, await stack.client.nonceOf(id), {});
  await refusedFund(id, buyer, () => post(at(id, 'fund'), again, MOCK_PROOF), 409, 'already_funded');
});

test('cosign twice: 409 already_cosigned; object after cosigning: 409 already_cosigned', async () => {
  const { b, c, id } = await proposedThreeWay();
  assert.is(assertOk(await stack.client.cosign(b, id)).state, 'PROPOSED');
  const nonce = await stack.client.nonceOf(id);
  await refused(id, () => post(at(id, 'cosign'), envelope(b, 'pacts.cosign', id, nonce, {})), 409, 'already_cosigned');
  await refused(id, () => post(at(id, 'object'), envelope(b, 'pacts.object', id, nonce, { reason: 'changed my mind' })), 409, 'already_cosigned');
  assert.is(assertOk(await stack.client.cosign(c, id)).state, 'SETTLED');
});

test('a second objection: 409 invalid_state, the first objection stands', async () => {
  const { b, c, id } = await proposedThreeWay();
  const disputed = assertOk(await stack.client.object(b, id, 'late'));
  assert.is(disputed.state, 'DISPUTED');
  for (const key of [c, b]) {
    const body = envelope(key, 'pacts.object', id, disputed.stateNonce, { reason: 'also late' });
    await refused(id, () => post(at(id, 'object'), body), 409, 'invalid_state');
  }
  assert.equal((await pactOf(id)).objection, disputed.objection);
});

// ===================================================================================================
// Distributions

/** Each bad distribution, and where below the distribution the server must point (`field`). */
const BAD_DISTRIBUTIONS: [name: string, shares: (a: KeyPair, b: KeyPair) => unknown[], below: string][] = [
  ['bp summing to 9999', (a, b) => [{ party: a.party, bp: 5000 }, { party: b.party, bp: 4999 }], ''],
  ['bp summing to 10001', (a, b) => [{ party: a.party, bp: 5001 }, { party: b.party, bp: 5000 }], ''],
  ['a party twice', (a) => [{ party: a.party, bp: 5000 }, { party: a.party, bp: 5000 }], ''],
  ['a party not in the pact', (a) => [{ party: a.party, bp: 5000 }, { party: generateKeyPair().party, bp: 5000 }], ''],
  ['no shares', () => [], ''],
  ['bp as a float', (a, b) => [{ party: a.party, bp: 5000.5 }, { party: b.party, bp: 4999.5 }], '.0.bp'],
  ['bp as a string', (a, b) => [{ party: a.party, bp: '5000' }, { party: b.party, bp: 5000 }], '.0.bp'],
  ['a negative bp', (a, b) => [{ party: a.party, bp: -1 }, { party: b.party, bp: 10001 }], '.0.bp'],
];

for (const [name, shares, below] of BAD_DISTRIBUTIONS) {
  test(`propose with ${name}: 400 invalid_request (field call.distribution${below})`, async () => {
    const { seller, buyer, id } = await activePact();
    const nonce = await stack.client.nonceOf(id);
    const body = envelope(seller, 'pacts.propose', id, nonce, proposal(shares(seller, buyer) as Share[]));
    await refused(id, () => post(at(id, 'propose'), body), 400, 'invalid_request', { field: `call.distribution${below}` });
    assertOk(await post(at(id, 'propose'), envelope(seller, 'pacts.propose', id, nonce, proposal(halves(seller, buyer)))));
  });

  test(`verdict with ${name}: 400 invalid_request (field distribution${below})`, async () => {
    const { seller, buyer, id, inputHash } = await disputedPact();
    const body = verdictCall(stack.evaluator, id, inputHash, shares(seller, buyer) as Share[]);
    await refused(id, () => post(at(id, 'verdict'), body), 400, 'invalid_request', { field: `distribution${below}` });
    assertOk(await post(at(id, 'verdict'), verdictCall(stack.evaluator, id, inputHash, halves(seller, buyer))));
  });
}

// ===================================================================================================
// Fund: the 402 flow and its proofs

test('a proofless fund: 402 with the requirement (deposit + bond, mock railData), nothing collected', async () => {
  const { buyer, id } = await createdPact();
  const fund = envelope(buyer, 'pacts.fund', id, 0, {});
  const quote = await refusedFund(id, buyer, () => post(at(id, 'fund'), fund), 402, 'payment_required');
  assert.equal(quote.requirement.amount, { amount: BUYER_OWES, asset: 'USDC' });
  assert.is(quote.requirement.railData.scheme, 'mock');
  assert.is(quote.requirement.railData.amount, BUYER_OWES);
  assert.is(typeof quote.requirement.payTo, 'string');
});

test('X-PAYMENT that is neither JSON nor base64 JSON: 400 invalid_request, nothing collected', async () => {
  const { buyer, id } = await createdPact();
  const fund = envelope(buyer, 'pacts.fund', id, 0, {});
  for (const header of ['scheme=mock', '{"scheme": "mock"', Buffer.from('{"scheme":').toString('base64'), '"mock"']) {
    await refusedFund(id, buyer, () => post(at(id, 'fund'), fund, { 'x-payment': header }), 400, 'invalid_request', { field: 'X-PAYMENT' });
  }
});

test('a proof of the wrong scheme: 402 payment_failed, nothing collected; the right proof then pays', async () => {
  const { buyer, id } = await createdPact();
  const fund = envelope(buyer, 'pacts.fund', id, 0, {});
  for (const proof of [{ scheme: 'x' }, {}, { scheme: 'MOCK' }]) {
    await refusedFund(id, buyer, () => post(at(id, 'fund'), fund, { 'x-payment': JSON.stringify(proof) }), 402, 'payment_failed');
  }
  assertOk(await post(at(id, 'fund'), fund, MOCK_PROOF));
  assert.is(await collectsBy(buyer), 1);
});

test('a payer without the balance: 402 payment_failed, nothing collected, balance untouched', async () => {
  const { buyer, id } = await createdPact();
  assert.is((await stack.mockRail({ balances: { [buyer.party]: '1' } })).status, 200);
  const fund = envelope(buyer, 'pacts.fund', id, 0, {});
  await refusedFund(id, buyer, () => post(at(id, 'fund'), fund, MOCK_PROOF), 402, 'payment_failed');
  assert.is((await stack.ledger()).balances[buyer.party], '1');
  assert.is(await collectsBy(buyer), 0);
  await stack.mockRail({ balances: { [buyer.party]: BUYER_OWES } });
  assertOk(await post(at(id, 'fund'), fund, MOCK_PROOF));
  assert.is((await stack.ledger()).balances[buyer.party], '0');
});

test('X-PAYMENT as base64 JSON is accepted; funding again is 409 already_funded', async () => {
  const { buyer, id } = await createdPact();
  const funded = assertOk(await post(at(id, 'fund'), envelope(buyer, 'pacts.fund', id, 0, {}), { 'x-payment': base64({ scheme: 'mock' }) }));
  assert.ok(funded.parties.find((p) => p.party === buyer.party)?.confirmed);
  assert.is(await collectsBy(buyer), 1);
  const again = envelope(buyer, 'pacts.fund', id, funded.stateNonce, {});
  await refusedFund(id, buyer, () => post(at(id, 'fund'), again, { 'x-payment': base64({ scheme: 'mock' }) }), 409, 'already_funded');
});

// ===================================================================================================
// Verdicts

test('a verdict signed by a key that is not the pinned evaluator: 401 invalid_signature', async () => {
  const { seller, buyer, id, inputHash } = await disputedPact();
  for (const key of [generateKeyPair(), seller, buyer]) {
    await refused(id, () => post(at(id, 'verdict'), verdictCall(key, id, inputHash, halves(seller, buyer))), 401, 'invalid_signature');
  }
});

test('a verdict with a forged signature or signed for another pact: 401 invalid_signature', async () => {
  const { seller, buyer, id, inputHash } = await disputedPact();
  const valid = verdictCall(stack.evaluator, id, inputHash, halves(seller, buyer));
  await refused(id, () => post(at(id, 'verdict'), forged(valid)), 401, 'invalid_signature');
  const other = await disputedPact();
  const forOther = verdictCall(stack.evaluator, other.id, inputHash, halves(seller, buyer));
  await refused(id, () => post(at(id, 'verdict'), forOther), 401, 'invalid_signature');
  assert.is((await pactOf(other.id)).state, 'DISPUTED');
  assert.is(assertOk(await post(at(id, 'verdict'), valid)).state, 'SETTLED');
});

test('a verdict on a pact that is not DISPUTED: 409 invalid_state', async () => {
  const { seller, buyer, id } = await proposedPact();
  const { inputHash } = await pactOf(id);
  await refused(id, () => post(at(id, 'verdict'), verdictCall(stack.evaluator, id, inputHash!, halves(seller, buyer))), 409, 'invalid_state');
});

test('a verdict on another input: 409 inputHash_mismatch', async () => {
  const { seller, buyer, id, inputHash } = await disputedPact();
  const wrong = flipHex(inputHash);
  await refused(id, () => post(at(id, 'verdict'), verdictCall(stack.evaluator, id, wrong, halves(seller, buyer))), 409, 'inputHash_mismatch');
});

// ===================================================================================================
// Mutual cancel

test('cancel without every party’s approval: 403 forbidden', async () => {
  const { seller, buyer, id } = await activePact();
  const [nonce, now] = [await stack.client.nonceOf(id), await serverNow()];
  const missing = await refused(id, () => post(at(id, 'cancel'), cancelCall(seller, id, nonce, [seller], now + HOUR)), 403, 'forbidden');
  assert.equal(missing.missing, [buyer.party]);
  // a party's approval cannot be replaced by an outsider's
  await refused(id, () => post(at(id, 'cancel'), cancelCall(seller, id, nonce, [seller, generateKeyPair()], now + HOUR)), 403, 'forbidden');
});

test('cancel submitted by an outsider, even with every approval: 403 forbidden', async () => {
  const { seller, buyer, id } = await activePact();
  const [nonce, now] = [await stack.client.nonceOf(id), await serverNow()];
  await refused(id, () => post(at(id, 'cancel'), cancelCall(generateKeyPair(), id, nonce, [seller, buyer], now + HOUR)), 403, 'forbidden');
});

test('cancel with a forged approval or one for another nonce: 401 invalid_signature', async () => {
  const { seller, buyer, id } = await activePact();
  const [nonce, now] = [await stack.client.nonceOf(id), await serverNow()];
  const valid = cancelCall(seller, id, nonce, [seller, buyer], now + HOUR);
  const forgedApproval = resigned(valid, (b) => (b.call.sigs[1].sig = flipHex(b.call.sigs[1].sig)), seller);
  await refused(id, () => post(at(id, 'cancel'), forgedApproval), 401, 'invalid_signature');
  const otherNonce = resigned(valid, (b) => (b.call.sigs = cancelCall(seller, id, nonce - 1, [seller, buyer], now + HOUR).call.sigs), seller);
  await refused(id, () => post(at(id, 'cancel'), otherNonce), 401, 'invalid_signature');
  assert.is(assertOk(await post(at(id, 'cancel'), valid)).state, 'CANCELLED');
});

test('cancel with expiresAt in the past: 422 deadline_passed', async () => {
  const { seller, buyer, id } = await activePact();
  const [nonce, now] = [await stack.client.nonceOf(id), await serverNow()];
  await refused(id, () => post(at(id, 'cancel'), cancelCall(seller, id, nonce, [seller, buyer], now - 1)), 422, 'deadline_passed');
});

test('cancel with expiresAt after the current deadline: 422 expiresAt_after_deadline', async () => {
  const { seller, buyer, id } = await activePact();
  const { stateNonce, performBy } = await pactOf(id);
  const body = cancelCall(seller, id, stateNonce, [seller, buyer], performBy! + 1);
  await refused(id, () => post(at(id, 'cancel'), body), 422, 'expiresAt_after_deadline');
});

// ===================================================================================================
// Unknown pacts and the list

const SIGNED_ROUTES: [route: string, action: Action, call: (id: string, key: KeyPair, now: number) => unknown][] = [
  ['fund', 'pacts.fund', () => ({})],
  ['withdraw', 'pacts.withdraw', () => ({})],
  ['propose', 'pacts.propose', (_id, key) => proposal([{ party: key.party, bp: 10000 }])],
  ['cosign', 'pacts.cosign', () => ({})],
  ['object', 'pacts.object', () => ({ reason: 'late' })],
  [
    'cancel',
    'pacts.cancel',
    (id, key, now) => {
      const expiresAt = now + HOUR;
      return { expiresAt, sigs: [{ signer: key.party, sig: signPayload({ action: 'cancel', pactId: id, stateNonce: 0, expiresAt }, key) }] };
    },
  ],
];

for (const id of [unknownPactId(), 'nope']) {
  test(`an unknown pact (${id === 'nope' ? 'malformed id' : 'well-formed id'}) on every route: 404 not_found, still none after`, async () => {
    const key = generateKeyPair();
    const now = await serverNow();
    assertError(await get(`/pacts/${id}`), 404, 'not_found');
    for (const [route, action, call] of SIGNED_ROUTES) {
      assertError(await post(at(id, route), envelope(key, action, id, 0, call(id, key, now)), MOCK_PROOF), 404, 'not_found');
    }
    const verdict = verdictCall(stack.evaluator, id, '0'.repeat(64), [{ party: key.party, bp: 10000 }]);
    assertError(await post(at(id, 'verdict'), verdict), 404, 'not_found');
    assertError(await post(at(id, 'poke')), 404, 'not_found');
    assertError(await get(`/pacts/${id}`), 404, 'not_found');
    assert.is(await collectsBy(key), 0);
  });
}

const BAD_QUERIES: [query: string, field: string][] = [
  ['limit=0', 'limit'],
  ['limit=500', 'limit'],
  ['limit=-1', 'limit'],
  ['limit=ten', 'limit'],
  ['limit=2.5', 'limit'],
  ['state=BOGUS', 'state'],
  ['state=active', 'state'],
  ['since=-1', 'since'],
  ['since=yesterday', 'since'],
  ['party=alice', 'party'],
  ['colour=red', 'colour'],
];

for (const [query, field] of BAD_QUERIES) {
  test(`GET /pacts?${query}: 400 invalid_request (field ${field})`, async () => {
    assertError(await get(`/pacts?${query}`), 400, 'invalid_request', { field });
  });
}

// ===================================================================================================
// Which check wins: 401, then 403, then 409, then 422

test('precedence: a forged signature by a non-party is 401, not 403', async () => {
  const { id } = await proposedPact();
  const outsider = generateKeyPair();
  const body = envelope(outsider, 'pacts.cosign', id, await stack.client.nonceOf(id), {});
  await refused(id, () => post(at(id, 'cosign'), forged(body)), 401, 'invalid_signature');
  await refused(id, () => post(at(id, 'cosign'), forged({ ...body, stateNonce: 0 })), 401, 'invalid_signature');
  await refused(id, () => post(at(id, 'cosign'), body), 403, 'forbidden'); // the same call, signed properly
});

test('precedence: a non-party with a stale nonce is 403, not 409', async () => {
  const { id } = await proposedPact();
  const outsider = generateKeyPair();
  await refused(id, () => post(at(id, 'cosign'), envelope(outsider, 'pacts.cosign', id, 0, {})), 403, 'forbidden');
  await refusedFund(id, outsider, () => post(at(id, 'fund'), envelope(outsider, 'pacts.fund', id, 0, {}), MOCK_PROOF), 403, 'forbidden');
});

test('precedence: a stale nonce with expired approvals is 409, not 422; missing approvals with expired ones is 403', async () => {
  const { seller, buyer, id } = await activePact();
  const [nonce, now] = [await stack.client.nonceOf(id), await serverNow()];
  const stale = cancelCall(seller, id, nonce - 1, [seller, buyer], now - 1);
  await refused(id, () => post(at(id, 'cancel'), stale), 409, 'stateNonce_mismatch', { currentNonce: nonce });
  await refused(id, () => post(at(id, 'cancel'), cancelCall(seller, id, nonce, [seller], now - 1)), 403, 'forbidden');
});

// ===================================================================================================
// After a deadline (last: the clock jump cancels every open pact on this server)

test('propose after performBy (the keeper cancelled the pact): 409 invalid_state', async () => {
  const { seller, buyer, id } = await activePact();
  await stack.advanceClock(168 * HOUR + 1);
  const cancelled = await stack.settledPayouts(id, 60_000); // refunds of every pact the jump closed queue up
  assert.is(cancelled.state, 'CANCELLED');
  const body = envelope(seller, 'pacts.propose', id, cancelled.stateNonce, proposal(halves(seller, buyer)));
  await refused(id, () => post(at(id, 'propose'), body), 409, 'invalid_state');
  const nonce = cancelled.stateNonce;
  await refused(id, () => post(at(id, 'cancel'), cancelCall(seller, id, nonce, [seller, buyer], stack.now + HOUR)), 409, 'invalid_state');
});

test.run();
