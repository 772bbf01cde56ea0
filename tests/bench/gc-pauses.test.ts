import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { gcPauseLine, gcPauses, parsePauses } from '../../bench/gc-pauses.js';

// The bench's record of the service's main-thread GC pauses: the preload that writes them, the window read from
// them, and the line made of them.

test('the preload records the pauses of the process it is loaded into', () => {
  const dir = mkdtempSync(join(tmpdir(), 'gc-pauses-'));
  const file = join(dir, 'gc.log');
  try {
    // Garbage enough for scavenges, a forced full collection, and time for the preload's writer to run.
    const program = 'let keep = []; for (let i = 0; i < 200000; i++) keep.push({ i, s: "x" + i }); keep = null; globalThis.gc(); setTimeout(() => {}, 700);';
    execFileSync(process.execPath, ['--expose-gc', ...gcPauses.nodeArgs, '-e', program], { env: { ...process.env, BENCH_GC_FILE: file } });
    const pauses = parsePauses(readFileSync(file, 'utf8'));
    assert.ok(pauses.some((pause) => pause.kind === 'scavenge'), JSON.stringify(pauses));
    assert.ok(pauses.some((pause) => pause.kind === 'mark-compact'), JSON.stringify(pauses));
    assert.ok(pauses.every((pause) => pause.ms >= 0 && Math.abs(pause.endedAt - Date.now()) < 60_000));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('one line: each kind, the total, and the pauses per request', () => {
  const pauses = parsePauses('1000 scavenge 1.5\n1001 scavenge 2.5\n1002 mark-compact 10\n1003 incremental 1\n1004 weak-callbacks 0.5\n');
  assert.is(
    gcPauseLine(pauses, 100),
    'main-thread GC pauses  scavenge 2× 4.0 ms, mark-compact 1× 10.0 ms, incremental 1× 1.0 ms, weak-callbacks 1× 0.5 ms; 15.5 ms in all: 155.0 µs per request',
  );
  assert.is(gcPauseLine([], 0), 'main-thread GC pauses  none; 0.0 ms in all');
});

test('a window holds the pauses that ended within it, both ends included', async () => {
  writeFileSync(gcPauses.file, '1000 scavenge 1\n1999 scavenge 2\n2000 mark-compact 3\n3000 incremental 4\n3001 scavenge 5\n');
  try {
    const pauses = await gcPauses.between(2000, 3000); // long past: read at once
    assert.equal(pauses.map((pause) => pause.endedAt), [2000, 3000]);
    gcPauses.remove();
    assert.equal(await gcPauses.between(0, 5000), [], 'no file: no pauses');
  } finally {
    gcPauses.remove();
  }
});

test.run();
