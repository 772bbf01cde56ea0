import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { AckedPublisher, PublishRefused } from '../../actors/acked-publisher.js';
import { inboxPrefixOf } from '../../actors/nats-roles.js';
import { JOURNAL_STREAM, journalSubject } from '../../actors/subjects.js';
import { startNatsServer } from '../../runtime/nats-server.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';

// JetStream publishes answered on one inbox subscription: each publish gets its own acknowledgement, however
// many are in flight; refusals, subjects no stream takes and silence are errors, never a made-up sequence.

const test = suite<{ bench: JournalBench; publisher: AckedPublisher }>('acked publisher');
test.before.each(async (context) => {
  context.bench = await startJournalBench('acked-publisher');
  context.publisher = new AckedPublisher(context.bench.nats.nc, inboxPrefixOf('host'), 400);
});
test.after.each(({ bench }) => bench.stop());

/** The error `publishing` rejects with; fails the test when it resolves. */
async function refusal(publishing: Promise<unknown>): Promise<Error> {
  const outcome = await publishing.then((ack) => ack, (error: Error) => error);
  if (!(outcome instanceof Error)) assert.unreachable(`acknowledged: ${JSON.stringify(outcome)}`);
  return outcome as Error;
}

const subject = (n: number) => journalSubject(`p_${String(n).padStart(32, '0')}`, 0);

test('300 publishes in flight: each is acknowledged with the sequence its own message got', async ({ bench, publisher }) => {
  const acks = await Promise.all(Array.from({ length: 300 }, (_, n) => publisher.publish(subject(n), `message ${n}`, { msgID: `m${n}` })));
  assert.equal(new Set(acks.map((ack) => ack.seq)).size, 300);
  for (const [n, ack] of acks.entries()) {
    assert.is(ack.stream, JOURNAL_STREAM);
    assert.is(ack.duplicate, false);
    const stored = await bench.nats.jsm.streams.getMessage(JOURNAL_STREAM, { seq: ack.seq });
    assert.is(stored?.string(), `message ${n}`);
  }
});

test('the same message id again is a duplicate of the first sequence', async ({ publisher }) => {
  const first = await publisher.publish(subject(1), 'once', { msgID: 'same' });
  const again = await publisher.publish(subject(1), 'once', { msgID: 'same' });
  assert.equal(again, { stream: JOURNAL_STREAM, seq: first.seq, duplicate: true });
});

test('a compare-and-set on a stale sequence is refused as JetStream words it', async ({ publisher }) => {
  const first = await publisher.publish(subject(2), 'a', { expect: { streamName: JOURNAL_STREAM, lastSubjectSequence: 0 } });
  await publisher.publish(subject(2), 'b', { expect: { lastSubjectSequence: first.seq } });
  const stale = await refusal(publisher.publish(subject(2), 'c', { expect: { lastSubjectSequence: first.seq } }));
  assert.instance(stale, PublishRefused);
  assert.match(String(stale), /wrong last sequence/i);
  assert.is((stale as PublishRefused).code, 10071);
  assert.match(String(await refusal(publisher.publish(subject(3), 'd', { expect: { streamName: 'ANOTHER_STREAM' } }))), /stream/i);
});

test('a subject no stream takes, and a reply that never comes, are errors', async ({ bench, publisher }) => {
  assert.match(String(await refusal(publisher.publish('no.stream.here', 'x'))), /did not take/);
  bench.nats.nc.subscribe('silent.subject', { callback: () => undefined }); // takes it, answers nothing
  const started = Date.now();
  assert.match(String(await refusal(publisher.publish('silent.subject', 'x'))), /no acknowledgement/);
  assert.ok(Date.now() - started >= 400, 'it waited its timeout');
});

test('a publish refused before its turn to be sent is never sent: its caller was told it failed', async ({ bench, publisher }) => {
  // Made in a check phase, the message leaves in the next one; the loop is held past the publisher's 400 ms
  // meanwhile, so the timeout sweep (a timer, earlier in the loop) refuses it first.
  const publishing = new Promise<{ made: Promise<unknown> }>((resolve) =>
    setImmediate(() => {
      const made = publisher.publish(subject(7), 'late', { msgID: 'late' });
      const until = performance.now() + 700;
      while (performance.now() < until); // holds the event loop
      resolve({ made });
    }),
  );
  assert.match(String(await refusal((await publishing).made)), /no acknowledgement/);
  await new Promise((resolve) => setTimeout(resolve, 300));
  const stored = await bench.nats.jsm.streams.getMessage(JOURNAL_STREAM, { last_by_subj: subject(7) }).catch(() => null);
  assert.is(stored, null, 'the refused message reached the stream');
});

test('what waits when the connection closes is refused', async ({ bench, publisher }) => {
  bench.nats.nc.subscribe('silent.subject', { callback: () => undefined });
  await bench.nats.nc.flush();
  const waiting = publisher.publish('silent.subject', 'x');
  await bench.nats.nc.close();
  assert.match(String(await refusal(waiting)), /closed before JetStream acknowledged/);
});

test.run();

const denied = suite('acked publisher of a NATS user denied something');

/** Runs `use` on a connection of a user with `permissions` (nats-server configuration syntax), its inbox prefix `_INBOX_ok`. */
async function asUser(permissions: string, use: (nc: NatsConnection) => Promise<void>): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'pact-acked-denied-'));
  const conf = join(root, 'nats.conf');
  writeFileSync(conf, `authorization { users = [ { user: "u", password: "p", permissions: ${permissions} } ] }\n`);
  const server = await startNatsServer(join(root, 'nats'), ['-c', conf]);
  const nc = await connect({ servers: server.url, user: 'u', pass: 'p', inboxPrefix: '_INBOX_ok' });
  const quietly = console.error;
  console.error = () => undefined;
  try {
    await use(nc);
  } finally {
    console.error = quietly;
    await nc.close();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
}

denied('may not read its inbox: every publish is refused at once with the permission error, and the connection still works', () =>
  asUser('{ publish: { allow: [">"] }, subscribe: { allow: ["_INBOX_ok.>"] } }', async (nc) => {
    const publisher = new AckedPublisher(nc, '_INBOX_denied', 10_000);
    const started = Date.now();
    assert.match(String(await refusal(publisher.publish('x.y', 'z'))), /permission/i);
    assert.match(String(await refusal(publisher.publish('x.y', 'z'))), /permission/i);
    assert.ok(Date.now() - started < 5_000, 'refused long before the 10 s timeout');
    assert.ok((await nc.request('$JS.API.INFO', '', { timeout: 5_000 })).string().length > 0, 'the connection still answers');
  }));

denied('may not publish to a subject: that publish is refused with the permission error, not left to time out', () =>
  asUser('{ publish: { allow: ["$JS.API.>", "allowed.>"] }, subscribe: { allow: ["_INBOX_ok.>"] } }', async (nc) => {
    const publisher = new AckedPublisher(nc, '_INBOX_ok', 60_000);
    const refused = refusal(publisher.publish('x.y', 'z'));
    const elsewhere = refusal(publisher.publish('allowed.one', 'z')); // allowed, but no stream takes it
    assert.match(String(await refused), /permissions violation for publish to "x\.y"/i);
    assert.match(String(await elsewhere), /503|no responders/i);
  }));

denied.run();
