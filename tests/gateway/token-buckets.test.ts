import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { clientOf, pullCost, TokenBuckets } from '../../gateway/token-buckets.js';

// Token buckets, with pulls' costs: they refill with time, charge long polls more, and never refuse forever.

test('a full bucket pays for pulls until empty, then says when it can pay again', () => {
  const tokens = new TokenBuckets(10);
  assert.is(tokens.take('a', pullCost(30), 0), undefined); // 7
  assert.is(tokens.take('a', pullCost(10), 0), undefined); // 3
  assert.equal(tokens.take('a', 1, 0), { retryAfter: 6 });
  assert.is(tokens.take('b', 1, 0), undefined, 'another address has its own bucket');
  assert.is(tokens.take('a', 1, 6_000), undefined, 'refilled after the time it said');
});

test('a long poll costlier than the whole bucket still goes through once the bucket is full', () => {
  const tokens = new TokenBuckets(3);
  assert.is(tokens.take('a', pullCost(30), 0), undefined);
  assert.equal(tokens.take('a', pullCost(30), 0), { retryAfter: 60 });
  assert.is(tokens.take('a', pullCost(30), 60_000), undefined);
});

test('a client is an IPv4 address, or the /64 of an IPv6 address however it is written', () => {
  assert.is(clientOf('203.0.113.9'), '203.0.113.9');
  assert.is(clientOf('::ffff:203.0.113.9'), '::ffff:203.0.113.9');
  assert.is(clientOf('2001:db8::1'), '2001:db8:0:0::/64');
  assert.is(clientOf('2001:DB8:0:0:5::9'), clientOf('2001:db8::77'));
  assert.is.not(clientOf('2001:db8:0:1::1'), clientOf('2001:db8::1'));
});

test.run();
