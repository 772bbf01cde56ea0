import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { create } from 'tar';
import { VERSION } from '../../protocol/version.js';

export interface CliPackage {
  bytes: Buffer;
  /** Lowercase hex SHA-256 of the bytes. */
  sha256: string;
  version: string;
}

const CLIENT = fileURLToPath(new URL('..', import.meta.url));
/** Every file of the tarball carries this time, so a version builds to the same bytes every time. */
const FIXED_MTIME = new Date('2000-01-01T00:00:00Z');

/**
 * `pact-cli-<version>.tgz` built from this tree: `bin/pact.mjs` (the CLI, one file with the SDK and @noble in it,
 * so installing needs no registry) and `sdk.mjs` (the SDK for browsers and Node), in npm's `package/` layout.
 */
export async function buildCliPackage(): Promise<CliPackage> {
  const root = mkdtempSync(join(tmpdir(), 'pact-cli-'));
  try {
    const dir = join(root, 'package');
    mkdirSync(join(dir, 'bin'), { recursive: true });
    await bundle(join(CLIENT, 'cli/bin.ts'), join(dir, 'bin/pact.mjs'), 'node');
    await bundle(join(CLIENT, 'sdk.ts'), join(dir, 'sdk.mjs'), 'neutral');
    writeFileSync(join(dir, 'package.json'), `${JSON.stringify(manifest(), null, 2)}\n`);
    writeFileSync(join(dir, 'README.md'), readFileSync(join(CLIENT, 'package/README.md')));
    for (const file of ['package.json', 'README.md', 'sdk.mjs']) chmodSync(join(dir, file), 0o644);
    chmodSync(join(dir, 'bin/pact.mjs'), 0o755);
    const files = ['package/package.json', 'package/README.md', 'package/sdk.mjs', 'package/bin/pact.mjs'];
    const stream = create({ cwd: root, gzip: { level: 9 }, portable: true, mtime: FIXED_MTIME, noDirRecurse: true }, files);
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    const bytes = Buffer.concat(chunks);
    return { bytes, sha256: createHash('sha256').update(bytes).digest('hex'), version: VERSION };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function bundle(entry: string, outfile: string, platform: 'node' | 'neutral'): Promise<void> {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform,
    target: 'es2022',
    mainFields: ['module', 'main'],
    legalComments: 'inline',
    logLevel: 'silent',
  });
}

function manifest() {
  return {
    name: 'pact-cli',
    version: VERSION,
    description: 'The pact command-line client of a Pact escrow server, and its SDK',
    type: 'module',
    bin: { pact: 'bin/pact.mjs' },
    exports: { '.': './sdk.mjs' },
    engines: { node: '>=20' },
    license: 'UNLICENSED',
  };
}
