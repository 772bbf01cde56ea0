import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream, jetstreamManager } from '@nats-io/jetstream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { authorizationConfig, connectOptionsOf, generateCredentials, type NatsCredentials, type NatsRole } from '../../actors/nats-roles.js';
import { CMD_STREAM, commandSubject, JOURNAL_STREAM, partitionConsumer } from '../../actors/subjects.js';
import { startNatsServer, type NatsServerProcess } from '../../runtime/nats-server.js';
import { runAudit } from '../support/audit.js';
import { forget, reapOnExit } from '../support/reaper.js';
import { Stack } from '../support/stack.js';
import { activePact } from '../support/trades.js';
import { offerBy } from '../support/offers.js';
import { generateKeyPair } from '../../protocol/sign.js';
import type { Offer } from '../../machines/offer/types.js';

// The service on a NATS that gives each role its own user and subject permissions (as `npm start`'s
// private server does): everything works, and no role can do another's work.

interface Context {
  root: string;
  server: NatsServerProcess;
  credentials: NatsCredentials;
  credentialsFile: string;
  stack: Stack;
}

const test = suite<Context>('NATS roles and permissions');

test.before(async (context) => {
  context.root = mkdtempSync(join(tmpdir(), 'pact-roles-'));
  context.credentials = generateCredentials();
  context.credentialsFile = join(context.root, 'credentials.json');
  writeFileSync(context.credentialsFile, JSON.stringify(context.credentials));
  writeFileSync(join(context.root, 'auth.conf'), authorizationConfig(context.credentials));
  context.server = await startNatsServer(join(context.root, 'nats'), ['-c', join(context.root, 'auth.conf')]);
  reapOnExit(context.server.pid);
  context.stack = await Stack.start({ natsUrl: context.server.url, env: { PACT_NATS_CREDENTIALS: context.credentialsFile } });
});
test.after(async ({ root, server, stack }) => {
  await stack.stop();
  await server.stop();
  forget(server.pid);
  rmSync(root, { recursive: true, force: true });
});

const as = (context: Context, role: NatsRole): Promise<NatsConnection> =>
  connect({ servers: context.server.url, ...connectOptionsOf(role, context.credentials[role]) });

/** Resolves to the error a JetStream publish met, or 'published'. */
async function publishOutcome(nc: NatsConnection, subject: string): Promise<string> {
  try {
    await jetstream(nc).publish(subject, '{}', { timeout: 2_000 });
    return 'published';
  } catch (error) {
    return String(error);
  }
}

test('a whole lifecycle runs with a user per role, and the audit reads the journal as a reader', async (context) => {
  const { stack } = context;
  const { seller, buyer, id } = await activePact(stack);
  assert.is((await stack.client.propose(seller, id, { evidence: [], distribution: [{ party: seller.party, bp: 10_000 }] })).status, 200);
  assert.is((await stack.client.cosign(buyer, id)).body.pact.state, 'SETTLED');
  await stack.settledPayouts(id); // the payout worker paid and recorded, under its own user
  // Offers too: published and accepted by the desk as a host, followed by the offer projector as a reader.
  const offerSeller = generateKeyPair();
  const offer = (await stack.client.request('POST', '/offers', offerBy(offerSeller, stack.now))).body.offer as Offer;
  assert.equal((await stack.client.searchOffers({ by: offerSeller.party })).body.offers.map((o) => o.offerId), [offer.offerId]);
  const accepted = await stack.client.acceptOffer(generateKeyPair(), offer.offerId, 'roles');
  assert.is(accepted.status, 200, JSON.stringify(accepted.body));
  const audit = await runAudit(context.server.url, '--all', { PACT_NATS_CREDENTIALS: context.credentialsFile });
  assert.is(audit.code, 0, audit.output);
});

test('no connection without a user', async (context) => {
  try {
    await (await connect({ servers: context.server.url, reconnect: false })).close();
    assert.unreachable('an anonymous client connected');
  } catch (error) {
    assert.match(String(error), /authorization/i);
  }
});

test('a gateway can send signed calls and pokes, but cannot record payouts, create offer pacts or write the journals', async (context) => {
  const nc = await as(context, 'gateway');
  try {
    assert.match(await publishOutcome(nc, commandSubject(0, 'payouts')), /permissions violation/i);
    assert.match(await publishOutcome(nc, commandSubject(0, 'accepted')), /permissions violation/i);
    assert.match(await publishOutcome(nc, 'pact.evt.p_forged'), /permissions violation/i);
    assert.match(await publishOutcome(nc, 'offer.evt.o_forged'), /permissions violation/i);
    assert.is(await publishOutcome(nc, commandSubject(0, 'poke')), 'published');
  } finally {
    await nc.close();
  }
});

test('only the payout worker records payouts; readers cannot touch the hosts\' consumers or the streams', async (context) => {
  const payouts = await as(context, 'payouts');
  const reader = await as(context, 'reader');
  try {
    assert.match(await publishOutcome(payouts, commandSubject(0, 'signed')), /permissions violation/i);
    assert.match(await publishOutcome(reader, 'pact.evt.p_forged'), /permissions violation/i);
    assert.match(await publishOutcome(reader, 'offer.evt.o_forged'), /permissions violation/i);
    assert.match(await publishOutcome(payouts, commandSubject(0, 'accepted')), /permissions violation/i);
    const readerJsm = await jetstreamManager(reader);
    for (const attempt of [
      () => readerJsm.consumers.delete(CMD_STREAM, partitionConsumer(0)),
      () => readerJsm.streams.purge(JOURNAL_STREAM),
      () => readerJsm.streams.delete(CMD_STREAM),
    ]) {
      await attempt().then(
        () => assert.unreachable('a reader changed JetStream'),
        (error: unknown) => assert.match(String(error), /permissions violation/i),
      );
    }
    const hostJsm = await jetstreamManager(await as(context, 'host'));
    assert.ok((await hostJsm.consumers.info(CMD_STREAM, partitionConsumer(0))).name, 'the host\'s consumer is still there');
  } finally {
    await payouts.close();
    await reader.close();
  }
});

test('no role can read another role\'s inbox: the reader never sees commands delivered to the host', async (context) => {
  const reader = await as(context, 'reader');
  try {
    const errors: string[] = [];
    reader.subscribe('_INBOX_host.>', { callback: (error) => void (error && errors.push(String(error))) });
    reader.subscribe('_INBOX.>', { callback: (error) => void (error && errors.push(String(error))) });
    await reader.flush();
    await new Promise((r) => setTimeout(r, 300));
    assert.is(errors.length, 2, errors.join('; '));
    assert.ok(errors.every((e) => /permissions violation/i.test(e)), errors.join('; '));
  } finally {
    await reader.close().catch(() => undefined);
  }
});

test.run();
