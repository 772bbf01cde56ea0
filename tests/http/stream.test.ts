import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { publicEvent, signEvent } from '../../client/stream.js';
import { generateKeyPair, type KeyPair } from '../../protocol/sign.js';
import type { PrivateEvent } from '../../stream/event.js';
import { openLevel } from '../../storage/level.js';
import { RECORDS_SUBLEVEL } from '../../stream/event-store.js';
import { Stack } from '../support/stack.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { eventIdOf } from '../../stream/event.js';
import { verifySignature } from '../../protocol/verify.js';

// The Agent Stream over HTTP (escrow-service.md, Events; DECISIONS.md, Agent Stream): publishing public
// and private events with every refusal, pulls with cursors, filters and long polls, quotas, restarts.

const QUOTA = 40;
const test = suite<{ stack: Stack }>('agent stream');

test.before(async (context) => {
  context.stack = await Stack.start({ env: { PACT_EVENT_QUOTA: String(QUOTA), PACT_PULL_WAITERS: '2' } });
});
test.after(async ({ stack }) => {
  await stack.stop();
});

const errorOf = (response: { body: unknown }) => (response.body as { error?: string }).error;
const channel = () => `ch-${Math.random().toString(36).slice(2)}`;
const event = (stack: Stack, key: KeyPair, fields: Record<string, unknown> = {}) =>
  publicEvent(key, { kind: 'task.offered', channel: 'general', body: { text: 'hello' }, ...fields }, stack.now);

function privateEvent(stack: Stack, key: KeyPair, keyIds: string[]): PrivateEvent {
  return signEvent<PrivateEvent>(
    {
      v: 0,
      privacy: 'private',
      publisher: key.party,
      createdAt: new Date(stack.now).toISOString(),
      expiresAt: new Date(stack.now + 3_600_000).toISOString(),
      ciphertextAlg: 'ChaCha20-Poly1305',
      nonce: Buffer.alloc(12, 7).toString('base64url'),
      audience: keyIds.map((keyId) => ({ keyId, enc: 'AAAA', wrappedKey: 'BBBB' })),
      ciphertext: Buffer.from('sealed').toString('base64url'),
    },
    key,
  );
}

/** Every event after the start (earliest by default) that `filter` lets through, following cursors to the end. */
async function pullAll(stack: Stack, filter: Record<string, unknown>, start: unknown = 'earliest'): Promise<string[]> {
  return (await pullAllEvents(stack, filter, start)).map((e) => e.id as string);
}

async function pullAllEvents(stack: Stack, filter: Record<string, unknown>, start: unknown = 'earliest'): Promise<any[]> {
  const events: any[] = [];
  let request: Record<string, unknown> = { start, filter, limit: 100 };
  for (let pages = 0; pages < 100; pages++) {
    const { status, body } = await stack.client.pull(request);
    assert.is(status, 200, JSON.stringify(body));
    events.push(...body.events);
    if (!body.hasMore) return events;
    request = { cursor: body.nextCursor, filter, limit: 100 };
  }
  throw new Error('pulls did not end');
}

test('publish: accepted with its id; the same event again is accepted once; a pull returns it as sent', async ({ stack }) => {
  const key = generateKeyPair();
  const sent = event(stack, key, { channel: channel(), tags: ['a', 'b'], recipients: [generateKeyPair().party], refs: [{ type: 'pact', id: 'p_1' }] });
  const first = await stack.client.publishEvent(sent);
  assert.is(first.status, 200, JSON.stringify(first.body));
  assert.equal(first.body, { accepted: true, eventId: sent.id });
  assert.match(sent.id, /^evt_[0-9a-f]{64}$/);
  assert.equal((await stack.client.publishEvent(sent)).body, { accepted: true, eventId: sent.id });
  const pulled = (await stack.client.pull({ start: 'earliest', filter: { public: { channels: [sent.channel] } } })).body;
  assert.equal(pulled.events, [sent]);
});

test('publish refusals: 422 for the schema, the id and the times, 401 for the signature, 413 above 32 KiB', async ({ stack }) => {
  const key = generateKeyPair();
  const expect = async (body: unknown, status: number, error: string) => {
    const response = await stack.client.publishEvent(body);
    assert.is(response.status, status, `${error}: ${JSON.stringify(response.body)}`);
    assert.is(errorOf(response), error);
  };
  const good = event(stack, key);
  await expect({ ...good, body: { text: 'changed' } }, 422, 'invalid_event'); // no longer its id
  await expect({ ...good, signature: event(stack, generateKeyPair()).signature }, 401, 'invalid_signature');
  const { signature: _s, ...unsigned } = good;
  await expect(unsigned, 422, 'invalid_event');
  const { kind: _k, ...noKind } = good;
  await expect(noKind, 422, 'invalid_event');
  await expect({ ...good, v: 1 }, 422, 'invalid_event');
  await expect({ ...good, privacy: 'secret' }, 422, 'invalid_event');
  await expect(publicEvent(key, { kind: 'k', body: {} }, stack.now), 422, 'invalid_event'); // neither channel nor recipients
  await expect(publicEvent(key, { kind: 'k', body: {}, recipients: [] }, stack.now), 422, 'invalid_event');
  await expect(event(stack, key, { tags: ['x', 'x'] }), 422, 'invalid_event');
  const someone = generateKeyPair().party;
  await expect(event(stack, key, { recipients: [someone, someone] }), 422, 'invalid_event');
  await expect(publicEvent(key, { kind: 'k', channel: 'c', body: {} }, stack.now, 7 * 86_400_000 + 1), 422, 'invalid_event');
  await expect(publicEvent(key, { kind: 'k', channel: 'c', body: {} }, stack.now - 7_200_000, 3_600_000), 422, 'invalid_event'); // expired
  await expect(publicEvent(key, { kind: 'k', channel: 'c', body: {} }, stack.now + 11 * 60_000, 3_600_000), 422, 'invalid_event'); // created ahead
  await expect(event(stack, key, { kind: 'pact.SETTLED' }), 422, 'invalid_event'); // the server's kinds
  await expect(publicEvent(key, { kind: 'k', channel: 'c', body: {} }, stack.now + 5 * 60_000), 422, 'invalid_event'); // seven days from a creation ahead: past seven days from now
  const { id: _i, signature: _g, ...content } = good;
  await expect(signEvent({ ...content, createdAt: good.createdAt.replace('Z', '') }, key), 422, 'invalid_event'); // no zone
  await expect(JSON.stringify(event(stack, key, { body: { n: 1 } })).replace('"n":1', '"n":1e400'), 400, 'invalid_request'); // no canonical form: like any unsignable body
  await expect(event(stack, key, { body: { text: 'x'.repeat(33 * 1024) } }), 413, 'too_large');
  const sealed = privateEvent(stack, key, ['hpke_abc']);
  await expect({ ...sealed, nonce: 'short' }, 422, 'invalid_event');
  await expect({ ...sealed, ciphertextAlg: 'AES-GCM' }, 422, 'invalid_event');
  assert.is((await stack.client.publishEvent(sealed)).status, 200);
  assert.equal(await pullAll(stack, { publishersAllow: [key.party], privacy: ['public', 'private'], private: { keyIds: ['hpke_abc'] } }), [sealed.id], 'nothing refused was kept');
});

test('pulls: start latest by default, cursors go on, start and cursor do not combine, bad parameters are 400', async ({ stack }) => {
  const key = generateKeyPair();
  const ch = channel();
  await stack.client.publishEvent(event(stack, key, { channel: ch, body: { n: 1 } }));
  const latest = await stack.client.pull({ filter: { public: { channels: [ch] } } });
  assert.equal(latest.body.events, []);
  assert.match(latest.body.nextCursor, /^cur_/);
  const second = event(stack, key, { channel: ch, body: { n: 2 } });
  await stack.client.publishEvent(second);
  const next = await stack.client.pull({ cursor: latest.body.nextCursor, filter: { public: { channels: [ch] } } });
  assert.equal(next.body.events.map((e) => e.id), [second.id]);
  assert.is(next.body.hasMore, false);
  for (const bad of [
    { cursor: latest.body.nextCursor, start: 'earliest' },
    { cursor: 'cur_nonsense!' },
    { cursor: 'cur_bm9uc2Vuc2U' },
    { limit: 0 },
    { limit: 101 },
    { waitSeconds: 31 },
    { start: 'yesterday' },
    { start: { since: 'not a time' } },
    { filter: { privacy: ['secret'] } },
    { filter: { reputation: { provider: 'other', minimum: 0.5 } } },
    { filter: { reputation: { provider: 'pact.settlement.v1', minimum: 2 } } },
    { filter: { unknown: true } },
  ]) {
    const response = await stack.client.pull(bad);
    assert.is(response.status, 400, JSON.stringify(bad));
    assert.is(errorOf(response), 'invalid_request', JSON.stringify(bad));
  }
});

test('filters combine: channels or recipients, kinds, tagsAll, publishers, privacy and key ids, per-publisher rate', async ({ stack }) => {
  const [a, b] = [generateKeyPair(), generateKeyPair()];
  const ch = channel();
  const reader = generateKeyPair().party;
  const e1 = event(stack, a, { channel: ch, kind: 'x', tags: ['red', 'big'] });
  const e2 = event(stack, b, { channel: channel(), recipients: [reader], kind: 'y', tags: ['red'] });
  const e3 = event(stack, b, { channel: ch, kind: 'x', tags: ['big'] });
  const e4 = privateEvent(stack, a, ['hpke_reader', 'hpke_other']);
  const e5 = privateEvent(stack, b, ['hpke_third']);
  const since = new Date(stack.now).toISOString();
  for (const e of [e1, e2, e3, e4, e5]) assert.is((await stack.client.publishEvent(e)).status, 200);
  const ids = (filter: Record<string, unknown>) => pullAll(stack, { publishersAllow: [a.party, b.party], ...filter }, { since });
  assert.equal(await ids({ public: { channels: [ch] } }), [e1.id, e3.id]);
  assert.equal(await ids({ public: { channels: [ch], recipients: [reader] } }), [e1.id, e2.id, e3.id]);
  assert.equal(await ids({ public: { recipients: [reader] } }), [e2.id]);
  assert.equal(await ids({ public: { kinds: ['x'] } }), [e1.id, e3.id]);
  assert.equal(await ids({ public: { tagsAll: ['red', 'big'] } }), [e1.id]);
  assert.equal(await ids({ public: { channels: [ch], tagsAll: ['big'] }, publishersDeny: [a.party] }), [e3.id]);
  assert.equal(await ids({}), [e1.id, e2.id, e3.id], 'private events only when asked for');
  assert.equal(await ids({ privacy: ['private'] }), [], 'private events are found by key id');
  assert.equal(await ids({ privacy: ['private'], private: { keyIds: ['hpke_reader', 'hpke_third'] } }), [e4.id, e5.id]);
  assert.equal(await ids({ privacy: ['private'], private: { keyIds: ['hpke_reader'] } }), [e4.id]);
  const both = { privacy: ['public', 'private'], private: { keyIds: ['hpke_reader', 'hpke_third'] } };
  assert.equal(await ids({ ...both, publishersAllow: [b.party] }), [e2.id, e3.id, e5.id]);
  assert.equal(await ids({ ...both, maxPerPublisherPerHour: 1 }), [e1.id, e2.id]);
});

test('a long poll wakes when a matching event is published, and ends empty at its wait', async ({ stack }) => {
  const key = generateKeyPair();
  const ch = channel();
  const { nextCursor } = (await stack.client.pull({ filter: { public: { channels: [ch] } } })).body;
  const waiting = stack.client.pull({ cursor: nextCursor, waitSeconds: 30, filter: { public: { channels: [ch] } } });
  const quiet = stack.client.pull({ cursor: nextCursor, waitSeconds: 1, filter: { public: { channels: [channel()] } } });
  await new Promise((resolve) => setTimeout(resolve, 300));
  await stack.client.publishEvent(event(stack, key, { channel: 'elsewhere' }));
  const wanted = event(stack, key, { channel: ch });
  await stack.client.publishEvent(wanted);
  const woken = await waiting;
  assert.equal(woken.body.events.map((e) => e.id), [wanted.id], 'answered with the event, not empty after 30 s');
  const ended = await quiet;
  assert.is(ended.status, 200);
  assert.equal(ended.body.events, []);
});

test('a long poll whose client leaves gives its place back at once', async ({ stack }) => {
  const filter = { public: { channels: [channel()] } };
  const leaving = new AbortController();
  const longPoll = () =>
    fetch(`${stack.url}/v0/pull`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ waitSeconds: 30, filter }), signal: leaving.signal }).catch(() => 'left');
  const waiting = [longPoll(), longPoll()];
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.is((await stack.client.pull({ waitSeconds: 1, filter })).status, 429, 'both places taken');
  leaving.abort();
  assert.equal(await Promise.all(waiting), ['left', 'left']);
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.is((await stack.client.pull({ waitSeconds: 1, filter })).status, 200, 'not held for the 30 s the leavers asked');
});

test('at most PACT_PULL_WAITERS long polls wait at once (429, Retry-After); a pull that does not wait is answered', async ({ stack }) => {
  const filter = { public: { channels: [channel()] } };
  const waiting = [stack.client.pull({ waitSeconds: 2, filter }), stack.client.pull({ waitSeconds: 2, filter })];
  await new Promise((resolve) => setTimeout(resolve, 300));
  const third = await stack.client.pull({ waitSeconds: 2, filter });
  assert.is(third.status, 429);
  assert.is(errorOf(third), 'rate_limited');
  assert.ok(Number(third.headers.get('retry-after')) > 0);
  assert.is((await stack.client.pull({ filter })).status, 200);
  assert.equal((await Promise.all(waiting)).map((r) => r.status), [200, 200]);
  assert.is((await stack.client.pull({ waitSeconds: 1, filter })).status, 200, 'a place is free again');
});

test('a pull reads a bounded number of events: hasMore and a cursor past them, then on to the end', async ({ stack }) => {
  const keys = Array.from({ length: 30 }, () => generateKeyPair()); // 35 events each: within the quota
  const since = new Date(stack.now).toISOString();
  for (let i = 0; i < 1_050; i += 50) { // 50 at a time: 1,050 at once once failed to connect (fetch failed) on a busy machine
    const sent = await Promise.all(Array.from({ length: 50 }, (_, j) => stack.client.publishEvent(event(stack, keys[(i + j) % 30]!, { channel: channel(), body: { i: i + j } }))));
    assert.ok(sent.every((r) => r.status === 200), 'every event kept');
  }
  const first = await stack.client.pull({ start: { since }, filter: { public: { kinds: ['nothing'] } } });
  assert.equal(first.body.events, []);
  assert.is(first.body.hasMore, true, 'a thousand events read, none matched: more may');
  const second = await stack.client.pull({ cursor: first.body.nextCursor, filter: { public: { kinds: ['nothing'] } } });
  assert.is(second.body.hasMore, false);
});

test(`quota: ${QUOTA} events per publisher per hour, then 429 with Retry-After; a republish is not counted`, async ({ stack }) => {
  const key = generateKeyPair();
  const events = Array.from({ length: QUOTA + 1 }, (_, i) => event(stack, key, { body: { i } }));
  for (const e of events.slice(0, QUOTA)) assert.is((await stack.client.publishEvent(e)).status, 200);
  const over = await stack.client.publishEvent(events[QUOTA]);
  assert.is(over.status, 429);
  assert.is(errorOf(over), 'quota_exceeded');
  assert.ok(Number(over.headers.get('retry-after')) > 0);
  assert.is((await stack.client.publishEvent(events[0])).status, 200, 'the same event again is accepted, not counted');
  assert.is((await stack.client.publishEvent(event(stack, generateKeyPair()))).status, 200, 'another publisher is not held back');
});

test(`quota under concurrency: of ${QUOTA + 10} events sent at once exactly ${QUOTA} are kept, the rest 429`, async ({ stack }) => {
  const key = generateKeyPair();
  const ch = channel();
  const events = Array.from({ length: QUOTA + 10 }, (_, i) => event(stack, key, { channel: ch, body: { i } }));
  const answers = await Promise.all(events.map((e) => stack.client.publishEvent(e)));
  const accepted = answers.filter((a) => a.status === 200).map((a) => a.body.eventId);
  assert.is(accepted.length, QUOTA, JSON.stringify(answers.map((a) => a.status)));
  assert.ok(answers.every((a) => a.status === 200 || errorOf(a) === 'quota_exceeded'));
  assert.equal((await pullAll(stack, { public: { channels: [ch] } })).sort(), accepted.sort(), 'what was accepted is what is kept');
});

test('after a kill -9 the stream resumes from a cursor: nothing acknowledged is lost', async ({ stack }) => {
  const key = generateKeyPair();
  const ch = channel();
  const { nextCursor } = (await stack.client.pull({ filter: { public: { channels: [ch] } } })).body;
  const before = [event(stack, key, { channel: ch, body: { n: 1 } }), event(stack, key, { channel: ch, body: { n: 2 } })];
  for (const e of before) assert.is((await stack.client.publishEvent(e)).status, 200);
  await stack.kill('SIGKILL');
  await stack.startServer();
  const after = event(stack, key, { channel: ch, body: { n: 3 } });
  assert.is((await stack.client.publishEvent(after)).status, 200);
  const pulled = await stack.client.pull({ cursor: nextCursor, filter: { public: { channels: [ch] } } });
  assert.equal(pulled.body.events.map((e) => e.id), [...before, after].map((e) => e.id));
});

test('the reputation filter: pact.settlement.v1 from the journal, 0 without history', async ({ stack }) => {
  const { seller, buyer } = newParties();
  const pactId = (await stack.client.create(seller, tradeSpec(seller, buyer))).body.pact.id as string;
  await stack.client.fund(seller, pactId);
  await stack.client.fund(buyer, pactId);
  await stack.client.propose(seller, pactId, { evidence: [], distribution: [{ party: seller.party, bp: 10_000 }] });
  assert.is((await stack.client.cosign(buyer, pactId)).body.pact.state, 'SETTLED');
  const newcomer = generateKeyPair();
  const since = new Date(stack.now).toISOString();
  const [trusted, unknown] = [event(stack, seller), event(stack, newcomer)];
  for (const e of [trusted, unknown]) assert.is((await stack.client.publishEvent(e)).status, 200);
  const ids = (minimum: number) =>
    pullAll(stack, { publishersAllow: [seller.party, newcomer.party], reputation: { provider: 'pact.settlement.v1', minimum } }, { since });
  assert.equal(await ids(0.5), [trusted.id]);
  assert.equal(await ids(1), [trusted.id]);
  assert.equal(await ids(0), [trusted.id, unknown.id]);
});

test('notifications of many pacts at once (more than one batch of the notifier): each pact\'s in order, each once', async ({ stack }) => {
  const server = (await stack.client.request('GET', '/health')).body.serverParty as string;
  const buyers: string[] = [];
  const pactIds = await Promise.all(
    Array.from({ length: 24 }, async () => {
      const { seller, buyer } = newParties();
      buyers.push(buyer.party);
      const pactId = (await stack.client.create(seller, tradeSpec(seller, buyer))).body.pact.id as string;
      await stack.client.fund(seller, pactId);
      await stack.client.fund(buyer, pactId);
      await stack.client.propose(seller, pactId, { evidence: [], distribution: [{ party: seller.party, bp: 10_000 }] });
      assert.is((await stack.client.cosign(buyer, pactId)).body.pact.state, 'SETTLED');
      return pactId;
    }),
  );
  const filter = { publishersAllow: [server], public: { recipients: buyers } };
  let events: any[] = [];
  for (let tries = 0; tries < 100 && events.length < 4 * pactIds.length; tries++) {
    if (tries > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    events = await pullAllEvents(stack, filter);
  }
  assert.is(events.length, 4 * pactIds.length, 'one notification per transition, none twice');
  for (const pactId of pactIds) {
    const kinds = events.filter((e) => e.refs[0].id === pactId).map((e) => e.kind);
    assert.equal(kinds, ['pact.CREATED', 'pact.ACTIVE', 'pact.PROPOSED', 'pact.SETTLED'], `${pactId}'s notifications in stream order`);
  }
});

test('the server notifies every state change of a pact, signed, once, even across a kill -9', async ({ stack }) => {
  const { seller, buyer } = newParties();
  const server = (await stack.client.request('GET', '/health')).body.serverParty as string;
  const pactId = (await stack.client.create(seller, tradeSpec(seller, buyer))).body.pact.id as string;
  await stack.client.fund(seller, pactId);
  await stack.client.fund(buyer, pactId);
  await stack.client.propose(seller, pactId, { evidence: [], distribution: [{ party: seller.party, bp: 10_000 }] });
  assert.is((await stack.client.cosign(buyer, pactId)).body.pact.state, 'SETTLED');
  const filter = { publishersAllow: [server], public: { recipients: [buyer.party] } };
  const notified = async (count: number) => {
    for (let tries = 0; tries < 100; tries++) {
      const events = await pullAllEvents(stack, filter);
      if (events.length >= count) return events;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error('notifications did not come');
  };
  const events = await notified(4);
  assert.equal(events.map((e) => e.kind), ['pact.CREATED', 'pact.ACTIVE', 'pact.PROPOSED', 'pact.SETTLED']);
  for (const e of events) {
    assert.equal(e.refs, [{ type: 'pact', id: pactId }]);
    assert.equal(new Set(e.recipients), new Set([seller.party, buyer.party]));
    assert.is(e.id, eventIdOf(e));
    assert.ok(verifySignature(server, e.id, e.signature), 'signed by the server party of /health');
  }
  await stack.kill('SIGKILL');
  await stack.startServer();
  await stack.client.publishEvent(event(stack, generateKeyPair())); // the stream moves on after the restart
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  assert.equal((await notified(4)).map((e) => e.id), events.map((e) => e.id), 'none published twice');
});

test('the Agent Stream\'s records come first in the node\'s LevelDB, before the pacts\' and every other key', async ({ stack }) => {
  // Run last: pacts, notifications and events are stored by now. An old record is then below every table written since.
  await stack.kill('SIGTERM');
  const level = await openLevel(join(stack.dataDir, 'leveldb'));
  try {
    const [first] = await level.keys({ limit: 1 }).all();
    assert.ok(first?.startsWith(`!${RECORDS_SUBLEVEL}!`), `the first key is ${first}`);
    assert.ok((await level.sublevel('summaries').keys({ limit: 1 }).all()).length > 0, 'pacts are stored too');
  } finally {
    await level.close();
  }
  await stack.startServer();
});

test.run();
