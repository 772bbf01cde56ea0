import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { BODY_OVERHEAD_BYTES, bodyOf, ResponseCache } from '../../projection/response-cache.js';
import { prng } from '../support/prng.js';

// The GET body cache: never serves a body older than the record, and keeps within its byte budget.

const text = (n: number) => JSON.stringify({ id: `p_${n}`, filler: 'x'.repeat(80) });
/** The cached bytes of `id` as text, or undefined. */
const cachedText = (cache: ResponseCache, id: string) => cache.get(id)?.toString();
/** What the cache counts for the body of `pactText`. */
const sizeOf = (pactText: string) => Buffer.byteLength(bodyOf(pactText)) + BODY_OVERHEAD_BYTES;

test('a body fetched while the record changed is sent but not kept', async () => {
  const cache = new ResponseCache(10_000);
  let release!: () => void;
  const fetched = cache.fill('p_1', () => new Promise((resolve) => (release = () => resolve(text(1)))));
  cache.changed('p_1', text(2)); // a write lands while the read is on disk
  release();
  assert.is((await fetched)?.toString(), bodyOf(text(1)));
  assert.is(cache.get('p_1'), undefined, 'the old body is not cached');
  await cache.fill('p_1', async () => text(2));
  assert.is(cachedText(cache, 'p_1'), bodyOf(text(2)));
});

test('a change replaces a cached body, and past the budget a body read since goes after one not read', async () => {
  const size = sizeOf(text(1));
  const cache = new ResponseCache(size * 2);
  await cache.fill('a', async () => text(1));
  await cache.fill('b', async () => text(2));
  cache.get('a'); // b is now the least recently read
  await cache.fill('c', async () => text(3));
  assert.ok(cache.get('a') && cache.get('c'));
  assert.is(cache.get('b'), undefined);
  cache.changed('a', text(4));
  assert.is(cachedText(cache, 'a'), bodyOf(text(4)));
});

test('a body replaced many times takes its room once: as many bodies fit as before', async () => {
  const cache = new ResponseCache(sizeOf(text(1)) * 3);
  await cache.fill('a', async () => text(1));
  for (let n = 2; n < 100; n++) cache.changed('a', text(n % 10));
  await cache.fill('b', async () => text(1));
  await cache.fill('c', async () => text(1));
  assert.ok(cache.get('a') && cache.get('b') && cache.get('c'));
});

test('a read spares a body one pass: when every body was read since, the oldest goes', async () => {
  const size = sizeOf(text(1));
  const cache = new ResponseCache(size * 2);
  await cache.fill('a', async () => text(1));
  await cache.fill('b', async () => text(2));
  cache.get('b');
  cache.get('a');
  await cache.fill('c', async () => text(3));
  assert.is(cache.get('a'), undefined, 'a was added first');
  assert.ok(cache.get('b') && cache.get('c'));
  await cache.fill('d', async () => text(4)); // b and c were both read again, and b is older
  assert.is(cache.get('b'), undefined);
  assert.ok(cache.get('c') && cache.get('d'));
});

test('the budget counts UTF-8 bytes, not characters, and the overhead of each body; a body is its UTF-8 bytes', async () => {
  const ascii = text(1);
  const wide = ascii.replace('xx', '\u20ac'); // one character fewer, two bytes more in UTF-8
  const cache = new ResponseCache(sizeOf(ascii) + sizeOf(wide) - 1);
  await cache.fill('a', async () => ascii);
  await cache.fill('b', async () => wide);
  assert.is(cache.get('a'), undefined, 'the ASCII body made room');
  assert.equal(cache.get('b'), Buffer.from(bodyOf(wide)));
});

test('a cached body has memory of its own, not a slice of a shared pool', async () => {
  const cache = new ResponseCache(10_000);
  await cache.fill('a', async () => text(1));
  const body = cache.get('a')!;
  assert.is(body.buffer.byteLength, body.length);
});

test('an unknown pact is not cached', async () => {
  const cache = new ResponseCache(10_000);
  assert.is(await cache.fill('p_x', async () => undefined), undefined);
  assert.is(cache.get('p_x'), undefined);
});

test('a cache full of read bodies passes over at most 64 of them to make room', async () => {
  const ids = Array.from({ length: 100 }, (_, n) => 100 + n); // bodies of one size
  const cache = new ResponseCache(sizeOf(text(100)) * ids.length);
  for (const n of ids) await cache.fill(`p_${n}`, async () => text(n));
  for (const n of ids) cache.get(`p_${n}`);
  await cache.fill('p_new', async () => text(200));
  const kept = ids.map((n) => cache.get(`p_${n}`) !== undefined);
  assert.equal(kept.indexOf(false), 64, 'the 65th oldest went, though read');
  assert.is(kept.filter((k) => !k).length, 1);
});

test('random fills, changes and reads: within the budget, never an old body, and a body that fits is kept when added', async () => {
  const random = prng(7).next;
  const budget = 5 * BODY_OVERHEAD_BYTES + 3_000;
  const cache = new ResponseCache(budget);
  const latest = new Map<string, string>();
  for (let step = 0; step < 3_000; step++) {
    const id = `p_${Math.floor(random() * 40)}`;
    const next = JSON.stringify({ id, step, filler: 'x'.repeat(Math.floor(random() * 600)) });
    const action = random();
    if (action < 0.4) {
      latest.set(id, next);
      await cache.fill(id, async () => next);
      assert.is(cachedText(cache, id), bodyOf(next));
    } else if (action < 0.7) {
      latest.set(id, next);
      cache.changed(id, next);
    } else cache.get(id);
    let held = 0;
    for (const [known, text] of latest) {
      const body = cache.get(known);
      if (body === undefined) continue;
      assert.is(body.toString(), bodyOf(text), `${known} at step ${step}`);
      held += body.length + BODY_OVERHEAD_BYTES;
    }
    assert.ok(held <= budget, `${held} bytes held at step ${step}`);
  }
});

test.run();
