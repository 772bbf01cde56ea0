import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { loadConfig } from '../../runtime/config.js';

test('a numeric setting left blank takes its default, as one left out does', () => {
  for (const blank of ['', ' ', '\t']) {
    assert.is(loadConfig({ PACT_RATE_LIMIT_PULLS: blank }).pullsPerMinute, 120);
    assert.is(loadConfig({ PACT_READ_CACHE_BYTES: blank }).readCacheBytes, 32 * 2 ** 20);
  }
  assert.is(loadConfig({ PACT_RATE_LIMIT_PULLS: '0' }).pullsPerMinute, 0, 'an explicit 0 still turns it off');
  assert.is(loadConfig({ PACT_RATE_LIMIT_PULLS: ' 5 ' }).pullsPerMinute, 5);
});

test('a numeric setting that is not a non-negative integer stops the start, naming what it got', () => {
  for (const bad of ['-1', '1.5', 'ten']) {
    assert.throws(() => loadConfig({ PACT_RATE_LIMIT_PULLS: bad }), (error: Error) => error.message === `PACT_RATE_LIMIT_PULLS must be a non-negative integer, got ${bad}`);
  }
});

test.run();
