import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { START_SCRIPT } from '../../runtime/launch.js';

// `npm start` starts the service exactly as the tests and the benchmark do: with the memory budget's flags.

test('npm start runs the launch script of runtime/launch.ts', () => {
  const pkg = JSON.parse(readFileSync(resolve(import.meta.dirname, '..', '..', 'package.json'), 'utf8')) as { scripts: { start: string } };
  assert.is(pkg.scripts.start, START_SCRIPT);
});

test.run();
