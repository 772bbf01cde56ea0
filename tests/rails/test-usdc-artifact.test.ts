import { readFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { compileTestUsdc, renderArtifactModule, TEST_USDC_ARTIFACT } from '../../contracts/compile.js';

// The tests deploy the committed artifact, not the source: it must be what solc-js makes of TestUSDC.sol today.

test('contracts/test-usdc-artifact.ts is TestUSDC.sol compiled (after an edit, run `npm run contracts`)', () => {
  const committed = readFileSync(TEST_USDC_ARTIFACT, 'utf8');
  assert.ok(committed === renderArtifactModule(compileTestUsdc()), 'stale: run `npm run contracts` and commit the result');
});

test.run();
