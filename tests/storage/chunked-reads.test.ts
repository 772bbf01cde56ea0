import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { inChunks, type ChunkedIterator } from '../../storage/chunked-reads.js';

// Reading a LevelDB iterator in growing chunks: what is asked for, and that it is closed however the reader stops.

/** An iterator over 0..total-1 that gives at most `short` entries a call, as LevelDB's does past 16 KiB; it records what it was asked. */
function counting(total: number, short: number): ChunkedIterator<number> & { asked: number[]; closed: boolean } {
  let next = 0;
  return {
    asked: [],
    closed: false,
    async nextv(size) {
      this.asked.push(size);
      const entries = Array.from({ length: Math.min(size, short, total - next) }, (_, i) => next + i);
      next += entries.length;
      return entries;
    },
    async close() {
      this.closed = true;
    },
  };
}

test('chunks double from the first up to a thousand, also when they come back short, and everything is read', async () => {
  const iterator = counting(5_000, 3);
  const read: number[] = [];
  for await (const chunk of inChunks(iterator, 51)) read.push(...chunk);
  assert.equal(read, Array.from({ length: 5_000 }, (_, i) => i));
  assert.equal(iterator.asked.slice(0, 6), [51, 102, 204, 408, 816, 1_000]);
  assert.is(Math.max(...iterator.asked), 1_000);
  assert.ok(iterator.closed);
});

test('a first chunk is asked for as at least one entry and at most a thousand', async () => {
  for (const [first, asked] of [[0, 1], [5_000, 1_000]] as const) {
    const iterator = counting(10, 10);
    for await (const _ of inChunks(iterator, first)) break;
    assert.is(iterator.asked[0], asked);
  }
});

test('chunks grow no larger than the largest asked for', async () => {
  const iterator = counting(500, 500);
  const read: number[] = [];
  for await (const chunk of inChunks(iterator, 64, 64)) read.push(...chunk);
  assert.is(read.length, 500);
  assert.equal(iterator.asked, [64, 64, 64, 64, 64, 64, 64, 64, 64]);
  assert.ok(iterator.closed);
});

test('a reader that stops early reads one chunk and closes the iterator', async () => {
  const iterator = counting(5_000, 5_000);
  for await (const chunk of inChunks(iterator, 51)) {
    assert.is(chunk.length, 51);
    break;
  }
  assert.equal(iterator.asked, [51]);
  assert.ok(iterator.closed);
});

test.run();
