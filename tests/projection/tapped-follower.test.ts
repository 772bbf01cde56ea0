import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { streamMessage } from '../../actors/stream-journal.js';
import { JOURNAL_STREAM } from '../../actors/subjects.js';
import type { JournalMessage } from '../../projection/journal-follower.js';
import { MessageTap, TappedFollower } from '../../projection/tapped-follower.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';
import { until } from '../support/until.js';

// A follower with no consumer of its own: it hears what a tap (the projector's follower) takes, and reads
// by sequence what it did not hear. Whatever it heard or missed, it hands each message on once, in order.

interface Context {
  bench: JournalBench;
  tap: MessageTap;
  followers: TappedFollower[];
}

const test = suite<Context>('tapped follower');
test.before.each(async (context) => {
  context.bench = await startJournalBench('tapped-follower');
  context.tap = new MessageTap();
  context.followers = [];
});
test.after.each(async ({ bench, followers }) => {
  for (const follower of followers) await follower.stop();
  await bench.stop();
});

const pact = pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair()));

/** Appends `count` entries of one pact; resolves to the journal messages, as a tap would take them. */
async function appended({ bench }: Context, count: number): Promise<JournalMessage[]> {
  const messages: JournalMessage[] = [];
  for (let nonce = 0; nonce < count; nonce++) {
    const event = nonce === 0 ? { type: 'created', at: 1, pact } : { type: 'poke', at: 1 + nonce };
    const seq = await bench.journal.append({ pactId: pact.id, nonce, commandId: `command-${nonce}`, event } as JournalEntry);
    const { subject, data } = (await streamMessage(bench.nats.jsm, JOURNAL_STREAM, { seq }))!;
    messages.push({ seq, subject, data });
  }
  return messages;
}

function followerOf(context: Context, deliver: (message: JournalMessage) => void | Promise<void>, maxHeard?: number): TappedFollower {
  const follower = new TappedFollower(context.bench.nats, JOURNAL_STREAM, 'the test', context.tap, deliver, maxHeard);
  context.followers.push(follower);
  return follower;
}

const seqsOf = (messages: JournalMessage[]) => messages.map((message) => message.seq);

test('what the tap took before the start is read from the stream, then what it tells is heard: each once, in order', async (context) => {
  const messages = await appended(context, 6);
  const [, second, , fourth] = messages;
  context.tap.from(fourth!.seq); // the tap took the first four before the follower started
  const handed: JournalMessage[] = [];
  followerOf(context, (message) => void handed.push(message)).start(messages[0]!.seq);
  await until(() => handed.length >= 3, 'the messages the tap took');
  for (const message of messages.slice(2)) context.tap.tell(message); // the third and fourth again, then two new
  await until(() => handed.length >= 5, 'the messages it heard');
  await new Promise((resolve) => setTimeout(resolve, 100)); // room for a wrong second hand-over
  assert.equal(seqsOf(handed), seqsOf(messages.slice(1)));
  assert.equal(Buffer.from(handed[0]!.data), Buffer.from(second!.data), 'what was read is the message itself');
});

test('far behind the tap, it reads the stream in chunks, passing over what is not there', async (context) => {
  const messages = await appended(context, 1_200);
  const gone = messages[700]!.seq;
  await context.bench.nats.jsm.streams.deleteMessage(JOURNAL_STREAM, gone);
  context.tap.from(messages.at(-1)!.seq);
  const handed: JournalMessage[] = [];
  followerOf(context, (message) => void handed.push(message)).start(0);
  await until(() => handed.length >= messages.length - 1, 'every message there is', 30_000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(seqsOf(handed), seqsOf(messages).filter((seq) => seq !== gone));
});

test('a receiver that holds it back past what it may keep heard: what it dropped is read back, each once, in order', async (context) => {
  const messages = await appended(context, 12);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  const handed: JournalMessage[] = [];
  const follower = followerOf(context, (message) => {
    handed.push(message);
    return message.seq === messages[0]!.seq ? held : undefined;
  }, 3);
  follower.start(0);
  for (const message of messages) context.tap.tell(message); // the first is handed on and held; the rest overflow
  await until(() => handed.length === 1, 'the first message');
  release();
  await until(() => handed.length >= messages.length, 'every message');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(seqsOf(handed), seqsOf(messages));
});

test('a follower ahead of the tap passes over what it hears up to its own position', async (context) => {
  const messages = await appended(context, 4);
  const handed: JournalMessage[] = [];
  followerOf(context, (message) => void handed.push(message)).start(messages[2]!.seq);
  for (const message of messages) context.tap.tell(message);
  await until(() => handed.length >= 1, 'the message after its position');
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(seqsOf(handed), [messages[3]!.seq]);
});

test('stopped, it hands nothing more on', async (context) => {
  const messages = await appended(context, 3);
  const handed: JournalMessage[] = [];
  const follower = followerOf(context, (message) => void handed.push(message));
  follower.start(0);
  context.tap.tell(messages[0]!);
  await until(() => handed.length === 1, 'the first message');
  await follower.stop();
  for (const message of messages.slice(1)) context.tap.tell(message);
  await new Promise((resolve) => setTimeout(resolve, 100));
  assert.equal(seqsOf(handed), [messages[0]!.seq]);
});

test('the tap: a listener that throws keeps neither the others nor the teller from going on; one that stopped listening hears nothing', () => {
  const tap = new MessageTap();
  const heard: number[] = [];
  tap.listen(() => {
    throw new Error('a failing listener');
  });
  const unlisten = tap.listen((message) => void heard.push(message.seq));
  const message = (seq: number): JournalMessage => ({ seq, subject: 'pact.journal.p_test', data: new Uint8Array() });
  const logged = console.error;
  console.error = () => undefined;
  try {
    tap.tell(message(1));
    unlisten();
    tap.tell(message(2));
  } finally {
    console.error = logged;
  }
  assert.equal(heard, [1]);
  assert.is(tap.position, 2);
});

test.run();
