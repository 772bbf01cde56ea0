import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { VERSION } from '../../protocol/version.js';
import { CliAgent, installCli } from '../support/cli.js';
import { Stack } from '../support/stack.js';

// The CLI as a new user gets it: installed by `curl <server>/install | sh` into a temporary prefix, then two
// identities (a seller and a buyer, each its own PACT_HOME) run whole pacts against the service as `npm start`
// runs it. Every command's exit code is asserted on success and on refusal.

const HOUR = 3_600_000;
const test = suite<{ stack: Stack; dir: string; pact: string }>('pact CLI');

let seller: CliAgent;
let buyer: CliAgent;
let stranger: CliAgent;

test.before(async (context) => {
  context.stack = await Stack.start();
  context.dir = mkdtempSync(join(tmpdir(), 'pact-cli-test-'));
  context.pact = installCli(context.stack.url, context.dir).pact;
  seller = new CliAgent(context, 'seller');
  buyer = new CliAgent(context, 'buyer');
  stranger = new CliAgent(context, 'stranger');
});

test.after(async ({ stack, dir }) => {
  await stack?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('--version, help, unknown commands and options', async () => {
  assert.is((await seller.expect(0, ['--version'])).stdout, `${VERSION}\n`);
  assert.match((await seller.expect(0, ['help'])).stdout, 'pact offers accept <offerId>');
  await seller.expect(2, ['frobnicate']);
  await seller.expect(2, ['get', 'p_1', '--colour', 'red']);
});

test('init writes the key 0600 in a 0700 directory, refuses to overwrite without --force; whoami', async ({ stack }) => {
  await stranger.expect(1, ['whoami']);
  for (const agent of [seller, buyer, stranger]) {
    const made = (await agent.expect(0, ['init', '--server', stack.url])).json;
    agent.party = made.partyId;
    assert.match(made.partyId, /^ed25519:/);
    assert.is(made.server, stack.url);
    assert.not.match((await agent.run(['whoami'])).stdout, 'privkey');
  }
  assert.is(statSync(seller.home).mode & 0o777, 0o700);
  assert.is(statSync(join(seller.home, 'agent.json')).mode & 0o777, 0o600);
  const file = JSON.parse(readFileSync(join(seller.home, 'agent.json'), 'utf8'));
  assert.equal(Object.keys(file).sort(), ['partyId', 'privkey', 'server']);
  await seller.expect(1, ['init']);
  const again = (await stranger.expect(0, ['init', '--force'])).json;
  assert.is.not(again.partyId, stranger.party);
  stranger.party = again.partyId;
  const me = (await seller.expect(0, ['whoami'])).json;
  assert.is(me.partyId, seller.party);
  assert.equal(me.access, { mode: 'open', status: 'allowed' });
});

test('the server: --server (before or after the command), else PACT_SERVER, else agent.json; a bad URL is a usage error', async ({ stack, dir }) => {
  const id = await newPact(dir);
  const nobody = new CliAgent({ dir, pact: seller.context.pact }, 'nobody');
  assert.is((await nobody.expect(0, ['get', id, '--server', stack.url])).json.pact.id, id);
  assert.is((await nobody.expect(0, ['--server', stack.url, 'get', id])).json.pact.id, id);
  await nobody.expect(1, ['get', id]); // the default, localhost:8402, is not this test's server
  assert.match((await nobody.expect(1, ['get', id, '--server', 'http://127.0.0.1:9'])).stderr, 'cannot reach the server');
  nobody.env = { PACT_SERVER: stack.url };
  await nobody.expect(0, ['get', id]);
  await nobody.expect(1, ['get', id, '--server', 'http://127.0.0.1:9']);
  await nobody.expect(2, ['get', id, '--server', 'not a url']);
  await nobody.expect(2, ['get', id, '--server', 'ftp://127.0.0.1']);
  seller.env = { PACT_SERVER: 'http://127.0.0.1:9' };
  await seller.expect(1, ['get', id]);
  seller.env = {};
  await seller.expect(0, ['get', id]);
});

test('a broken agent.json is refused with how to mend it, and init --force mends it', async ({ stack }) => {
  const broken = new CliAgent({ dir: join(stranger.home, '..'), pact: seller.context.pact }, 'broken');
  await broken.expect(0, ['init', '--server', stack.url]);
  writeFileSync(join(broken.home, 'agent.json'), '{}');
  assert.match((await broken.expect(1, ['whoami'])).stderr, 'pact init --force');
  await broken.expect(1, ['init']);
  assert.match((await broken.expect(0, ['init', '--force', '--server', stack.url])).json.partyId, /^ed25519:/);
  assert.is(statSync(join(broken.home, 'agent.json')).mode & 0o777, 0o600);
});

test('usage: a missing argument is exit 2; --help is the command’s usage', async () => {
  for (const args of [['fund'], ['withdraw'], ['cosign'], ['poke'], ['put', 'p_1'], ['link', 'p_1'], ['download', 'p_1'], ['offers', 'accept'], ['bind-address', 'x402'], ['object', 'p_1'], ['cancel', 'p_1'], ['quickstart', '--amount', 'ten']]) {
    await seller.expect(2, args);
  }
  assert.match((await seller.expect(0, ['get', '--help'])).stdout, 'pact get <pactId>');
  assert.match((await seller.expect(0, ['help'])).stdout, '--version');
});

test('fund --proof-stdin: the proof as JSON or base64 JSON; anything else is refused without being echoed', async ({ dir }) => {
  const id = await newPact(dir);
  const secret = 'sk_live_do-not-print!';
  const refused = await buyer.expect(1, ['fund', id, '--proof-stdin'], secret);
  assert.not.match(refused.stderr, 'sk_live', 'the proof is a secret');
  const base64 = Buffer.from(JSON.stringify({ scheme: 'mock' })).toString('base64');
  assert.is((await buyer.expect(0, ['fund', id, '--proof-stdin'], base64)).json.pact.state, 'CREATED');
  assert.is((await seller.expect(0, ['fund', id, '--proof-stdin'], '{"scheme":"mock"}\n')).json.pact.state, 'ACTIVE');
});

test('quickstart prints a spec for a rail the server offers, refuses one it does not', async () => {
  const spec = (await seller.expect(0, ['quickstart', '--counterparty', buyer.party])).json;
  assert.is(spec.rail, 'mock');
  assert.is(spec.parties[0].party, seller.party);
  assert.is(spec.parties[1].party, buyer.party);
  assert.match((await seller.expect(1, ['quickstart', '--rail', 'x402'])).stderr, 'does not offer the x402 rail');
});

test('settle by cosign: create, fund, put, link, download, propose, cosign, get, list', async ({ dir }) => {
  const id = await newPact(dir);
  await stranger.expect(1, ['fund', id]);
  await buyer.expect(1, ['propose', id, '--dist', `${buyer.party}:10000`]);
  await buyer.expect(0, ['fund', id]);
  await buyer.expect(1, ['fund', id]);
  const active = (await seller.expect(0, ['fund', id])).json;
  assert.is(active.pact.state, 'ACTIVE');

  const evidence = join(dir, 'delivery.txt');
  writeFileSync(evidence, 'the summary, 500 words');
  const put = (await seller.expect(0, ['put', id, evidence])).json;
  assert.match(put.hash, /^[0-9a-f]{64}$/);
  await stranger.expect(1, ['put', id, evidence]);
  await seller.expect(1, ['put', id, join(dir, 'no-such-file')]);
  const link = (await buyer.expect(0, ['link', id, put.hash])).json;
  assert.match(link.url, '/dl/');
  await stranger.expect(1, ['link', id, put.hash]);
  const out = join(dir, 'downloaded.txt');
  await buyer.expect(0, ['download', id, put.hash, '--out', out]);
  assert.is(readFileSync(out, 'utf8'), 'the summary, 500 words');
  assert.is((await buyer.expect(0, ['download', id, put.hash])).stdout, 'the summary, 500 words');
  assert.not.match((await buyer.expect(0, ['download', id, put.hash, '--out', out])).stderr, 'downloading', 'no bar when stderr is not a terminal');
  const uploading = await seller.inTerminal(['put', id, evidence]);
  assert.is(uploading.code, 0);
  assert.match(uploading.stdout, /uploading \[#+\] 100%/);
  const downloading = await buyer.inTerminal(['download', id, put.hash, '--out', out]);
  assert.is(downloading.code, 0);
  assert.match(downloading.stdout, /downloading \[#+\] 100%/);
  await buyer.expect(1, ['download', id, 'ab'.repeat(32)]);

  await seller.expect(2, ['propose', id]);
  await seller.expect(2, ['propose', id, '--dist', 'nocolon']);
  const proposed = (await seller.expect(0, ['propose', id, '--dist', `${seller.party}:10000`, '--blob', put.hash, '--note', 'delivered'])).json;
  assert.is(proposed.pact.state, 'PROPOSED');
  assert.equal(proposed.pact.proposal.evidence, [{ blob: put.hash }, { note: 'delivered' }]);
  await seller.expect(1, ['cosign', id]);
  assert.is((await buyer.expect(0, ['cosign', id])).json.pact.state, 'SETTLED');
  await buyer.expect(1, ['cosign', id]);

  assert.is((await stranger.expect(0, ['get', id])).json.pact.state, 'SETTLED');
  await stranger.expect(1, ['get', 'p_00000000000000000000000000000000']);
  await stranger.expect(2, ['get']);
  const mine = (await seller.expect(0, ['list', '--mine', '--state', 'SETTLED'])).json;
  assert.ok(mine.pacts.some((pact: { id: string }) => pact.id === id));
  await seller.expect(1, ['list', '--state', 'HAPPY']);
  await seller.expect(2, ['list', '--limit', 'many']);
});

test('dispute to verdict: object, the evaluator rules', async ({ stack, dir }) => {
  await stack.client.request('POST', '/__test/evaluator', { mode: 'stub', verdict: { feeFrom: 'objector' } });
  const id = await activePact(dir);
  await seller.expect(0, ['propose', id, '--dist', `${seller.party}:10000`, '--note', 'done']);
  await buyer.expect(2, ['object', id]);
  await stranger.expect(1, ['object', id, '--reason', 'not mine to judge']);
  assert.is((await buyer.expect(0, ['object', id, '--reason', 'the summary is 900 words, not 500'])).json.pact.state, 'DISPUTED');
  await buyer.expect(1, ['object', id, '--reason', 'again']);
  const ruled = await until(async () => (await buyer.expect(0, ['get', id])).json.pact, (pact: any) => pact.state !== 'DISPUTED');
  assert.is(ruled.state, 'SETTLED');
  assert.ok(ruled.verdict, 'the pact carries the evaluator’s verdict');
  await stack.client.request('POST', '/__test/evaluator', { mode: 'none' });
});

test('mutual cancel: one approval printed, submitted with the other party’s on stdin', async ({ dir }) => {
  const id = await activePact(dir);
  const expiresAt = new Date(Date.now() + 3 * HOUR).toISOString();
  await seller.expect(2, ['cancel', id]);
  const approval = (await seller.expect(0, ['cancel', id, '--expires-at', expiresAt])).json;
  assert.is(approval.signer, seller.party);
  assert.match(approval.sig, /^[0-9a-f]{128}$/);
  await buyer.expect(1, ['cancel', id, '--expires-at', expiresAt, '--signatures-stdin'], '');
  const other = new Date(Date.parse(expiresAt) + 60_000).toISOString();
  assert.match((await buyer.expect(1, ['cancel', id, '--expires-at', other, '--signatures-stdin'], JSON.stringify(approval))).stderr, 'use the same --expires-at');
  await buyer.expect(1, ['cancel', id, '--expires-at', expiresAt, '--signatures-stdin'], 'not json');
  const cancelled = (await buyer.expect(0, ['cancel', id, '--expires-at', expiresAt, '--signatures-stdin'], JSON.stringify(approval))).json;
  assert.is(cancelled.pact.state, 'CANCELLED');
});

test('withdraw before activation gives the deposit back; a second withdraw is refused', async ({ dir }) => {
  const id = await newPact(dir);
  await buyer.expect(0, ['fund', id]);
  const withdrawn = (await buyer.expect(0, ['withdraw', id])).json;
  assert.is(withdrawn.pact.state, 'CREATED');
  assert.is(withdrawn.pact.parties.find((p: { party: string }) => p.party === buyer.party).confirmed, false);
  await buyer.expect(1, ['withdraw', id]);
  await stranger.expect(1, ['withdraw', id]);
});

test('offers: publish, search, watch, accept', async ({ dir }) => {
  const spec = (await seller.expect(0, ['quickstart', '--counterparty', buyer.party])).json;
  const offer = {
    tags: ['cli-test'],
    text: 'a 500-word summary of any paper',
    expiresAt: Date.now() + 24 * HOUR,
    template: { rail: spec.rail, price: spec.parties[1].deposit, buyerBond: spec.parties[1].bond, sellerBond: spec.parties[0].bond, windows: spec.windows, terms: spec.terms },
  };
  const offerFile = join(dir, 'offer.json');
  writeFileSync(offerFile, JSON.stringify(offer));
  const published = (await seller.expect(0, ['offers', 'publish', '--file', offerFile])).json;
  await seller.expect(1, ['offers', 'publish'], JSON.stringify({ ...offer, tags: ['has space'] }));
  const found = (await buyer.expect(0, ['offers', 'search', '--tags', 'cli-test'])).json;
  assert.ok(found.offers.some((o: { offerId: string }) => o.offerId === published.offer.offerId));
  await buyer.expect(1, ['offers', 'search', '--limit', '0']);
  await buyer.expect(0, ['offers', 'watch', '--tags', 'cli-test', '--timeout-ms', '100']);
  await buyer.expect(1, ['offers', 'watch', '--timeout-ms', '999999']);
  const accepted = (await buyer.expect(0, ['offers', 'accept', published.offer.offerId, '--acceptance-id', 'first'])).json;
  assert.is(accepted.pact.sourceOffer.id, published.offer.offerId);
  await seller.expect(1, ['offers', 'accept', published.offer.offerId]);
});

test('access: status, request, verify and admin on an open server', async () => {
  assert.equal((await buyer.expect(0, ['access'])).json, { mode: 'open', status: 'allowed' });
  assert.is((await buyer.expect(0, ['access', seller.party])).json.mode, 'open');
  await buyer.expect(1, ['access', 'not-a-party']);
  await buyer.expect(2, ['request-access']);
  assert.is((await buyer.expect(0, ['request-access', '--email', 'agent@example.com'])).json.sent, false, 'an open server mails no code');
  await buyer.expect(1, ['request-access', '--email', `${'a'.repeat(300)}@example.com`]);
  await buyer.expect(2, ['verify'], 'twelve');
  const prompted = await buyer.inTerminal(['verify'], { after: 'code from the mail: ', keys: '654321\r' });
  assert.is(prompted.code, 0, prompted.stdout);
  assert.not.match(prompted.stdout, '654321', `the code typed at the prompt is not echoed: ${JSON.stringify(prompted.stdout)}`);
  assert.match(prompted.stdout, '"status": "allowed"');
  assert.is((await buyer.expect(0, ['verify'], '123456\n')).json.status, 'allowed', 'an open server allows every party');
  await buyer.expect(1, ['admin', 'allow', '--target', seller.party]);
});

test('events: publish and pull', async () => {
  const event = { kind: 'cli.hello', channel: 'cli-test', body: { hello: 'world' } };
  const published = (await seller.expect(0, ['events', 'publish'], JSON.stringify(event))).json;
  assert.is(published.accepted, true);
  await seller.expect(1, ['events', 'publish'], JSON.stringify({ ...event, kind: '' }));
  const pulled = (await buyer.expect(0, ['events', 'pull', '--start', 'earliest', '--filter', JSON.stringify({ public: { channels: ['cli-test'] } })])).json;
  assert.ok(pulled.events.some((e: { id: string }) => e.id === published.eventId));
  await buyer.expect(1, ['events', 'pull', '--cursor', 'nonsense']);
  await buyer.expect(2, ['events', 'pull', '--filter', '{']);
});

test('bind-address: first write wins per rail; a rail this server lacks is refused', async () => {
  const bound = (await seller.expect(0, ['bind-address', 'mock', 'seller-payouts'])).json;
  assert.equal({ rail: bound.rail, party: bound.party, address: bound.address }, { rail: 'mock', party: seller.party, address: 'seller-payouts' });
  await seller.expect(0, ['bind-address', 'mock', 'seller-payouts']);
  assert.match((await seller.expect(1, ['bind-address', 'mock', 'elsewhere'])).stderr, 'address_already_bound (409)');
  assert.match((await seller.expect(1, ['bind-address', 'x402', '0x0000000000000000000000000000000000000001'])).stderr, 'rail_not_available (400)');
});

// Last: it moves the server's clock 200 hours, past the expiry of what the other tests sign with wall time.
test('dispute to refund: no verdict by verdictBy, poke cancels and refunds; later calls stamped now still work', async ({ stack, dir }) => {
  const id = await activePact(dir);
  await seller.expect(0, ['propose', id, '--dist', `${seller.party}:10000`]);
  await buyer.expect(0, ['object', id, '--reason', 'never delivered']);
  assert.is((await stranger.expect(0, ['poke', id])).json.pact.state, 'DISPUTED', 'nothing is due yet: a poke changes nothing');
  await stack.advanceClock(200 * HOUR);
  assert.is((await stranger.expect(0, ['poke', id])).json.pact.state, 'CANCELLED');
  await stranger.expect(1, ['poke', 'p_00000000000000000000000000000000']);
  // issuedAt is judged by the wall clock: a create stamped Date.now() is fresh although the server's clock moved.
  await newPact(dir);
});

/** A pact made by the seller's quickstart spec with the buyer as counterparty: its id. */
async function newPact(dir: string): Promise<string> {
  const spec = (await seller.expect(0, ['quickstart', '--counterparty', buyer.party])).json;
  const file = join(dir, `spec-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(spec));
  await seller.expect(1, ['create', '--file', join(dir, 'missing.json')]);
  await seller.expect(1, ['create'], '{ not json');
  await seller.expect(1, ['create'], JSON.stringify({ ...spec, minParties: 9 }));
  const created = (await seller.expect(0, ['create', '--file', file])).json;
  assert.is(created.pact.state, 'CREATED');
  return created.pact.id;
}

async function activePact(dir: string): Promise<string> {
  const id = await newPact(dir);
  await buyer.expect(0, ['fund', id]);
  assert.is((await seller.expect(0, ['fund', id])).json.pact.state, 'ACTIVE');
  return id;
}

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

test.run();
