import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { RecentDurations } from '../../actors/recent-durations.js';

test('nothing timed yet has no percentiles', () => {
  assert.equal(new RecentDurations(10).summary(), { count: 0, last: 0, p50Ms: null, p99Ms: null });
});

test('the percentiles are the nearest ranks of the durations held, in number order', () => {
  const durations = new RecentDurations(100);
  for (let ms = 100; ms >= 1; ms--) durations.add(ms + 0.004);
  assert.equal(durations.summary(), { count: 100, last: 100, p50Ms: 50, p99Ms: 99 });
});

test('only the last `capacity` durations count; every one added is counted', () => {
  const durations = new RecentDurations(4);
  for (const ms of [500, 500, 500, 1, 2, 3, 4]) durations.add(ms);
  assert.equal(durations.summary(), { count: 7, last: 4, p50Ms: 2, p99Ms: 4 });
});

test('a capacity that holds nothing is refused', () => {
  assert.throws(() => new RecentDurations(0), RangeError);
  assert.throws(() => new RecentDurations(2.5), RangeError);
});

test.run();
