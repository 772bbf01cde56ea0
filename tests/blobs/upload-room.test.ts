// The upload room: a bound on uploads received at once, and a floor of free disk.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { UploadRoom } from '../../blobs/upload-room.js';

const dir = mkdtempSync(join(tmpdir(), 'pact-room-'));

test('at most uploadsAtOnce at a time; a released place is free again, and releasing twice frees one', async () => {
  const room = new UploadRoom(dir, { uploadsAtOnce: 2, minFreeBytes: 0 });
  const first = await room.claim(10);
  const second = await room.claim(10);
  assert.ok('release' in first && 'release' in second);
  const third = await room.claim(10);
  assert.ok('refused' in third && third.refused.error === 'rate_limited');
  first.release();
  first.release();
  const again = await room.claim(10);
  assert.ok('release' in again);
  assert.ok('refused' in (await room.claim(10)));
});

test('an upload that would leave less than minFreeBytes free is refused as unavailable, and holds no place', async () => {
  const room = new UploadRoom(dir, { uploadsAtOnce: 1, minFreeBytes: Number.MAX_SAFE_INTEGER });
  const refused = await room.claim(10);
  assert.ok('refused' in refused && refused.refused.error === 'unavailable');
  const roomy = new UploadRoom(dir, { uploadsAtOnce: 1, minFreeBytes: 0 });
  assert.ok('release' in (await roomy.claim(10)));
});

test.run();
