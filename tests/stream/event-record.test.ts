import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { readRecord, recordOf, type Facets } from '../../stream/event-record.js';

// The store's one value per event: facets and text come back as they went in, whatever newlines either holds.

const facets: Facets = { privacy: 'public', publisher: 'ed25519:x', expiresAt: 2, receivedAt: 1, ordinal: 1, channel: 'a\nb', tags: ['\n'] };

test('facets and text are read back as written, newlines in either included', () => {
  for (const text of ['{"v":0}', '{\n  "v": 0\n}\n', '']) assert.equal(readRecord(recordOf(facets, text)), { facets, text });
});

test.run();
