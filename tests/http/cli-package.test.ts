import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { build } from 'esbuild';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { VERSION } from '../../protocol/version.js';
import { Stack } from '../support/stack.js';

// GET /install and GET /pact-cli.tgz: the installer names this server, the package is the same bytes every
// time for a version (its ETag), and its SDK is fit for a browser. tests/cli/pact-cli.test.ts installs and runs it.

const test = suite<{ stack: Stack; dir: string }>('CLI package');
const PUBLIC_URL = 'https://pact.example.test';

test.before(async (context) => {
  // Behind a TLS proxy: the pages and the installer name PACT_PUBLIC_URL, whatever Host was asked for.
  context.stack = await Stack.start({ env: { PACT_PUBLIC_URL: PUBLIC_URL } });
  context.dir = mkdtempSync(join(tmpdir(), 'pact-cli-package-'));
});
test.after(async ({ stack, dir }) => {
  await stack.stop();
  rmSync(dir, { recursive: true, force: true });
});

const PACKAGE_JSON = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));

test('the CLI’s version is the repository’s', () => {
  assert.is(VERSION, PACKAGE_JSON.version);
});

test('GET /install: a POSIX shell script naming PACT_PUBLIC_URL and the package’s SHA-256, never cached across hosts', async ({ stack }) => {
  const response = await fetch(`${stack.url}/install`);
  assert.is(response.status, 200);
  assert.match(String(response.headers.get('content-type')), 'text/x-shellscript');
  assert.is(response.headers.get('cache-control'), 'no-store');
  assert.is(response.headers.get('vary'), 'Host');
  const script = await response.text();
  assert.ok(script.startsWith('#!/bin/sh\n'));
  assert.match(script, `server='${PUBLIC_URL}'`);
  const etag = (await fetch(`${stack.url}/pact-cli.tgz`, { method: 'HEAD' })).headers.get('etag');
  assert.match(script, `sha256='${etag!.slice(1, -1)}'`);
  assert.not.match(script, '{{');
  assert.is(spawnSync('sh', ['-n'], { input: script }).status, 0, 'the script parses as sh');
  const landing = await (await fetch(`${stack.url}/`)).text();
  assert.match(landing, `curl -fsSL ${PUBLIC_URL}/install | sh`);
});

test('the installer refuses a package whose SHA-256 is not the one it names, and installs the one it names', async ({ stack, dir }) => {
  const script = (await (await fetch(`${stack.url}/install`)).text()).replace(`server='${PUBLIC_URL}'`, `server='${stack.url}'`);
  const run = (text: string, prefix: string) =>
    spawnSync('sh', [], { input: text, encoding: 'utf8', env: { PATH: process.env.PATH, HOME: dir, PACT_PREFIX: join(dir, prefix) }, timeout: 120_000 });
  const tampered = run(script.replace(/sha256='[0-9a-f]{64}'/, `sha256='${'0'.repeat(64)}'`), 'refused');
  assert.is(tampered.status, 1, tampered.stdout);
  assert.match(tampered.stderr, 'is not the one this installer names');
  const installed = run(script, 'installed');
  assert.is(installed.status, 0, installed.stderr);
  assert.match(installed.stdout, `pact ${VERSION} is installed`);
});

test('GET /pact-cli.tgz: gzip, the same bytes each time, an ETag of their hash, 304 when unchanged', async ({ stack }) => {
  const first = await fetch(`${stack.url}/pact-cli.tgz`);
  assert.is(first.status, 200);
  assert.is(first.headers.get('content-type'), 'application/gzip');
  const bytes = Buffer.from(await first.arrayBuffer());
  const etag = first.headers.get('etag');
  assert.is(etag, `"${createHash('sha256').update(bytes).digest('hex')}"`);
  const again = Buffer.from(await (await fetch(`${stack.url}/pact-cli.tgz`)).arrayBuffer());
  assert.ok(bytes.equals(again));
  for (const ifNoneMatch of [etag!, `W/${etag}`, `"other", ${etag}`, '*']) {
    const unchanged = await fetch(`${stack.url}/pact-cli.tgz`, { headers: { 'if-none-match': ifNoneMatch } });
    assert.is(unchanged.status, 304, ifNoneMatch);
    assert.is((await unchanged.arrayBuffer()).byteLength, 0);
  }
  assert.is((await fetch(`${stack.url}/pact-cli.tgz`, { headers: { 'if-none-match': '"other"' } })).status, 200);
});

test('the package: npm layout, a pact bin, and an SDK that bundles for a browser without Node built-ins', async ({ stack, dir }) => {
  writeFileSync(join(dir, 'pact-cli.tgz'), Buffer.from(await (await fetch(`${stack.url}/pact-cli.tgz`)).arrayBuffer()));
  const listed = spawnSync('tar', ['tzvf', join(dir, 'pact-cli.tgz')], { encoding: 'utf8' });
  assert.is(listed.status, 0);
  assert.match(listed.stdout, /-rwxr-xr-x .* package\/bin\/pact\.mjs/);
  assert.match(listed.stdout, 'package/sdk.mjs');
  spawnSync('tar', ['xzf', join(dir, 'pact-cli.tgz'), '-C', dir]);
  const manifest = JSON.parse(readFileSync(join(dir, 'package/package.json'), 'utf8'));
  assert.equal({ name: manifest.name, version: manifest.version, bin: manifest.bin }, { name: 'pact-cli', version: VERSION, bin: { pact: 'bin/pact.mjs' } });
  // A browser build of the SDK fails on any node: import; then the SDK signs a call, as a page would.
  const browser = await build({ entryPoints: [join(dir, 'package/sdk.mjs')], bundle: true, platform: 'browser', format: 'esm', write: false, logLevel: 'silent' });
  const sdkFile = join(dir, 'sdk-browser.mjs');
  writeFileSync(sdkFile, browser.outputFiles[0]!.text);
  const sdk = await import(sdkFile);
  const key = sdk.generateKeyPair();
  const client = new sdk.PactClient(stack.url);
  const health = await client.health();
  assert.is(health.status, 200);
  assert.match(client.signedCall(key, 'pacts.create', '', 0, {}).sig, /^[0-9a-f]{128}$/);
});

test.run();
