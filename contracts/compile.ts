import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import solc from 'solc';

// TestUSDC.sol compiled by solc-js (its bundled soljson, nothing downloaded) into the committed artifact
// module, so tests deploy in milliseconds instead of paying ~1 s of compilation in every test process.
// tests/rails/test-usdc-artifact.test.ts recompiles and fails when the committed module is stale.

export const TEST_USDC_SOURCE = fileURLToPath(new URL('./TestUSDC.sol', import.meta.url));
export const TEST_USDC_ARTIFACT = fileURLToPath(new URL('./test-usdc-artifact.ts', import.meta.url));

// ganache 7.9 knows no hardfork after shanghai: cancun opcodes (mcopy, tstore) would not run there.
const EVM_VERSION = 'shanghai';

interface SolcOutput {
  errors?: { severity: 'error' | 'warning' | 'info'; formattedMessage: string }[];
  contracts: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
}

export interface CompiledContract {
  compiler: string;
  abi: unknown[];
  bytecode: `0x${string}`;
}

export function compileTestUsdc(): CompiledContract {
  const input = {
    language: 'Solidity',
    sources: { 'TestUSDC.sol': { content: readFileSync(TEST_USDC_SOURCE, 'utf8') } },
    settings: {
      evmVersion: EVM_VERSION,
      optimizer: { enabled: true, runs: 200 },
      outputSelection: { 'TestUSDC.sol': { TestUSDC: ['abi', 'evm.bytecode.object'] } },
    },
  };
  const output = JSON.parse(solc.compile(JSON.stringify(input))) as SolcOutput;
  const problems = (output.errors ?? []).filter((e) => e.severity !== 'info');
  if (problems.length > 0) throw new Error(`TestUSDC.sol: ${problems.map((e) => e.formattedMessage).join('\n')}`);
  const contract = output.contracts['TestUSDC.sol']?.TestUSDC;
  if (!contract) throw new Error('TestUSDC.sol: solc returned no TestUSDC contract');
  return { compiler: `solc ${solc.version()}`, abi: contract.abi, bytecode: `0x${contract.evm.bytecode.object}` };
}

/** The text of the artifact module: the ABI `as const`, so viem types every call and event on the token. */
export function renderArtifactModule(compiled: CompiledContract): string {
  return [
    `// Generated from contracts/TestUSDC.sol by \`npm run contracts\` (${compiled.compiler}, evmVersion ${EVM_VERSION}). Do not edit.`,
    '',
    `export const testUsdcAbi = ${JSON.stringify(compiled.abi, null, 2)} as const;`,
    '',
    `export const testUsdcBytecode = '${compiled.bytecode}' as const;`,
    '',
  ].join('\n');
}
