import { writeFileSync } from 'node:fs';
import { compileTestUsdc, renderArtifactModule, TEST_USDC_ARTIFACT } from './compile.js';

// `npm run contracts`: rewrite the committed artifact after editing TestUSDC.sol.
const compiled = compileTestUsdc();
writeFileSync(TEST_USDC_ARTIFACT, renderArtifactModule(compiled));
console.log(`${TEST_USDC_ARTIFACT}: ${compiled.compiler}, ${(compiled.bytecode.length - 2) / 2} bytes of init code`);
