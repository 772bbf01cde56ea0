import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstream } from '@nats-io/jetstream';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { EVENT_SUBJECT } from '../../actors/subjects.js';
import { publicEvent } from '../../client/stream.js';
import { generateKeyPair, type KeyPair } from '../../protocol/sign.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// Two service processes on one NATS, each with its own gateway and event store: a long poll on one wakes
// on a publish through the other, the quota holds across both, and what is put on the stream straight over
// NATS is checked by every node before it is kept.

const QUOTA = 20;
const test = suite<{ first: Stack; second: Stack; nc: NatsConnection }>('agent stream on two nodes');

test.before(async (context) => {
  // One deployment: both nodes sign notifications with the same server key.
  const keyFile = join(mkdtempSync(join(tmpdir(), 'pact-server-key-')), 'server.seed');
  writeFileSync(keyFile, `${randomBytes(32).toString('hex')}\n`);
  const env = { PACT_EVENT_QUOTA: String(QUOTA), PACT_SERVER_KEY_FILE: keyFile };
  context.first = await Stack.start({ env });
  context.second = await Stack.start({ env, natsUrl: context.first.natsUrl });
  context.nc = await connect({ servers: context.first.natsUrl });
});
test.after(async ({ first, second, nc }) => {
  await nc.close();
  await second.stop();
  await first.stop();
});

const channel = () => `ch-${Math.random().toString(36).slice(2)}`;
const event = (stack: Stack, key: KeyPair, ch: string, n = 0) => publicEvent(key, { kind: 'k', channel: ch, body: { n } }, stack.now);

/** The ids a pull from the earliest event on `stack` finds on `ch`, following cursors. */
async function idsOn(stack: Stack, ch: string): Promise<string[]> {
  const ids: string[] = [];
  let request: Record<string, unknown> = { start: 'earliest', limit: 100, filter: { public: { channels: [ch] } } };
  for (;;) {
    const { body } = await stack.client.pull(request);
    ids.push(...body.events.map((e) => e.id as string));
    if (!body.hasMore) return ids;
    request = { cursor: body.nextCursor, limit: 100, filter: request.filter };
  }
}

test('a long poll on one node is answered by a publish through the other, long before its wait ends', async ({ first, second }) => {
  const ch = channel();
  const { nextCursor } = (await second.client.pull({ filter: { public: { channels: [ch] } } })).body;
  const started = Date.now();
  const waiting = second.client.pull({ cursor: nextCursor, waitSeconds: 30, filter: { public: { channels: [ch] } } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const sent = event(first, generateKeyPair(), ch);
  assert.is((await first.client.publishEvent(sent)).status, 200);
  const woken = await waiting;
  assert.equal(woken.body.events.map((e) => e.id), [sent.id]);
  assert.ok(Date.now() - started < 20_000, 'answered by the publish, not by the end of its wait');
});

test(`the quota holds across nodes: of ${QUOTA + 10} events sent at once through both, exactly ${QUOTA} are kept, the same on each`, async ({ first, second }) => {
  const key = generateKeyPair();
  const ch = channel();
  const nodes = [first, second];
  const answers = await Promise.all(Array.from({ length: QUOTA + 10 }, (_, i) => nodes[i % 2]!.client.publishEvent(event(first, key, ch, i))));
  const accepted = answers.filter((a) => a.status === 200).map((a) => a.body.eventId).sort();
  assert.is(accepted.length, QUOTA, JSON.stringify(answers.map((a) => a.status)));
  assert.ok(answers.every((a) => a.status === 200 || a.status === 429));
  for (const node of nodes) assert.equal((await idsOn(node, ch)).sort(), accepted);
});

test('straight on NATS: a forged signature and garbage are not kept by any node; a good event is, on both', async ({ first, second, nc }) => {
  const ch = channel();
  const js = jetstream(nc);
  const good = event(first, generateKeyPair(), ch, 1);
  const forged = { ...event(first, generateKeyPair(), ch, 2), signature: good.signature };
  for (const data of [JSON.stringify({ receivedAt: first.now, event: forged }), 'not json', JSON.stringify({ receivedAt: 'soon', event: good }), JSON.stringify({ receivedAt: first.now, event: good })]) {
    await js.publish(EVENT_SUBJECT, data);
  }
  const deadline = Date.now() + 10_000;
  for (const node of [first, second]) {
    let ids: string[] = [];
    while (ids.length === 0 && Date.now() < deadline) {
      ids = await idsOn(node, ch);
      if (ids.length === 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(ids, [good.id]);
  }
});

test('a pact made through one node is notified once per transition, the same on both, under the one server party', async ({ first, second }) => {
  const server = (await first.client.request('GET', '/health')).body.serverParty as string;
  assert.is((await second.client.request('GET', '/health')).body.serverParty, server);
  const { seller, buyer } = newParties();
  const pactId = (await first.client.create(seller, tradeSpec(seller, buyer))).body.pact.id as string;
  await first.client.fund(seller, pactId);
  await first.client.fund(buyer, pactId);
  const notified = async (node: Stack) => {
    for (let tries = 0; tries < 100; tries++) {
      const { body } = await node.client.pull({ start: 'earliest', limit: 100, filter: { publishersAllow: [server], public: { recipients: [buyer.party] } } });
      if (body.events.length >= 2) return body.events.map((e) => `${e.kind} ${e.id}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('notifications did not come');
  };
  const onFirst = await notified(first);
  await new Promise((resolve) => setTimeout(resolve, 500));
  assert.equal(onFirst.map((line) => line.split(' ')[0]), ['pact.CREATED', 'pact.ACTIVE']);
  assert.equal(await notified(first), onFirst, 'not published again by the other node');
  assert.equal(await notified(second), onFirst);
});

test.run();
