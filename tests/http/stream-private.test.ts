import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newHpkeKey, openPrivateEvent, sealPrivateEvent } from '../../client/private-events.js';
import { signEvent } from '../../client/stream.js';
import { generateKeyPair } from '../../protocol/sign.js';
import type { PrivateEvent } from '../../stream/event.js';
import { Stack } from '../support/stack.js';

// A private round trip through the server (escrow-service.md, Private event): the publisher seals an event
// for one reader with HPKE; the server keeps only the signed envelope; the reader pulls it by its key id and
// opens it; a third party can neither find it by its own key id nor open it with its key.

const test = suite<{ stack: Stack }>('private events');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

test('sealed for a reader, opened by it alone', async ({ stack }) => {
  const publisher = generateKeyPair();
  const [reader, third] = await Promise.all([newHpkeKey(), newHpkeKey()]);
  const plaintext = { channel: 'deals', kind: 'counter.offer', tags: ['secret'], body: { price: '900' } };
  const sealed = await sealPrivateEvent(publisher, [reader.publicKey], plaintext, stack.now);
  const published = await stack.client.publishEvent(sealed);
  assert.is(published.status, 200, JSON.stringify(published.body));

  const pull = (keyIds: string[]) => stack.client.pull({ start: 'earliest', filter: { privacy: ['private'], private: { keyIds }, publishersAllow: [publisher.party] } });
  const [received] = (await pull([reader.keyId])).body.events as PrivateEvent[];
  assert.ok(received, 'the reader finds it by its key id');
  assert.not.ok('body' in received! || 'channel' in received!, 'the server holds the envelope only');
  assert.equal(await openPrivateEvent(received!, reader), plaintext);

  assert.equal((await pull([third.keyId])).body.events, [], 'not addressed to the third party');
  assert.is(await openPrivateEvent(received!, third), undefined, 'no entry for its key');
  const posing = { ...third, keyId: reader.keyId }; // the reader's key id, with the third party's key
  await openPrivateEvent(received!, posing).then(
    () => assert.unreachable('the third party opened it'),
    (error: unknown) => assert.ok(error instanceof Error),
  );
  // Lifted into an event of another publisher, the ciphertext no longer opens.
  const thief = generateKeyPair();
  const { id: _id, signature: _sig, ...envelope } = received!;
  const lifted = signEvent<PrivateEvent>({ ...envelope, publisher: thief.party }, thief);
  assert.is((await stack.client.publishEvent(lifted)).status, 200, 'the server cannot tell');
  await openPrivateEvent(lifted, reader).then(
    () => assert.unreachable('a lifted ciphertext opened'),
    (error: unknown) => assert.ok(error instanceof Error),
  );
  const tampered = { ...received!, ciphertext: received!.ciphertext.slice(0, -2) + (received!.ciphertext.endsWith('AA') ? 'BB' : 'AA') };
  await openPrivateEvent(tampered, reader).then(
    () => assert.unreachable('a changed ciphertext opened'),
    (error: unknown) => assert.ok(error instanceof Error),
  );
});

test.run();
