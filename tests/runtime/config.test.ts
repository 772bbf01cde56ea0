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

test('a numeric setting is read as JavaScript reads a number: exponents and hexadecimal are whole numbers too', () => {
  assert.is(loadConfig({ PACT_JOURNAL_MAX_BYTES: '8e9' }).journalMaxBytes, 8_000_000_000);
  assert.is(loadConfig({ PACT_RATE_LIMIT_PULLS: '0x10' }).pullsPerMinute, 16);
  assert.throws(() => loadConfig({ PACT_RATE_LIMIT_PULLS: '1e-3' }), /non-negative integer/);
});

test('PACT_LEVELDB_WRITE_BUFFER_BYTES: 8 MiB by default, and a size LevelDB would not keep to stops the start', () => {
  assert.is(loadConfig({}).levelWriteBufferBytes, 8 * 2 ** 20);
  assert.is(loadConfig({ PACT_LEVELDB_WRITE_BUFFER_BYTES: '' }).levelWriteBufferBytes, 8 * 2 ** 20);
  assert.is(loadConfig({ PACT_LEVELDB_WRITE_BUFFER_BYTES: '16777216' }).levelWriteBufferBytes, 16 * 2 ** 20);
  for (const tooFar of ['0', '65535', String(2 ** 30 + 1)]) {
    assert.throws(() => loadConfig({ PACT_LEVELDB_WRITE_BUFFER_BYTES: tooFar }), /PACT_LEVELDB_WRITE_BUFFER_BYTES must be between 65536 and 1073741824/);
  }
  assert.throws(() => loadConfig({ PACT_LEVELDB_WRITE_BUFFER_BYTES: 'big' }), /non-negative integer/);
});

test.run();
