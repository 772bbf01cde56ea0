import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { median } from '../../bench/stats.js';

// The median the stream phase prints of its rounds' ratios.

test('an odd number of values: the middle one, whatever their order', () => {
  assert.is(median([1.52, 1.03, 1.22, 0.99, 1.13]), 1.13);
});

test('an even number: the mean of the two middle ones, not the lower of them', () => {
  assert.is(median([1.03, 0.99, 1.22, 1.13, 1.52, 1.28]), (1.13 + 1.22) / 2);
});

test('one value is its own median; none has no median', () => {
  assert.is(median([2]), 2);
  assert.ok(Number.isNaN(median([])));
});

test.run();
