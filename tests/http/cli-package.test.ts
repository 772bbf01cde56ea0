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
test.before(async (context) => {
  context.stack = await Stack.start();
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

test('GET /install: a POSIX shell script that fetches this server’s package into a prefix', async ({ stack }) => {
  const response = await fetch(`${stack.url}/install`);
  assert.is(response.status, 200);
  assert.match(String(response.headers.get('content-type')), 'text/x-shellscript');
  const script = await response.text();
  assert.ok(script.startsWith('#!/bin/sh\n'));
  assert.match(script, `server='${stack.url}'`);
  assert.match(script, 'PACT_PREFIX:-$HOME/.pact/cli');
  assert.not.match(script, '{{base}}');
  assert.is(spawnSync('sh', ['-n'], { input: script }).status, 0, 'the script parses as sh');
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
  const unchanged = await fetch(`${stack.url}/pact-cli.tgz`, { headers: { 'if-none-match': etag! } });
  assert.is(unchanged.status, 304);
  assert.is((await unchanged.arrayBuffer()).byteLength, 0);
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
