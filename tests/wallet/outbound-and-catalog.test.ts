import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Catalog } from '../../wallet/registry/catalog.js';
import { Registry } from '../../wallet/registry/registry.js';
import { isPublicAddress, outboundFetch, readAtMost } from '../../wallet/public-network.js';

// What the wallet calls on a registry's or a provider's word: public addresses only (checked as the socket
// connects, and for IP literals), bodies read to a cap; and a deployment's catalog file checked whole at start.

test('public addresses only: private, loopback, shared, link-local, mapped and reserved ones are not', () => {
  for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111']) assert.ok(isPublicAddress(address), address);
  for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '100.64.0.1', '169.254.169.254', '0.0.0.0', '::1', '::', 'fd00::1', 'fe80::1', '::ffff:127.0.0.1', '::ffff:172.16.0.1', '::127.0.0.1', '2002:7f00:1::1', '2001:0:4136:e378::1', '64:ff9b:1::a00:1', 'fec0::1', '224.0.0.1', 'not an address']) {
    assert.not.ok(isPublicAddress(address), address);
  }
});

test('a fetch for a provider refuses loopback by literal and by name, and other schemes; allowed for tests', async () => {
  const server = createServer((_req, res) => res.end('{"secret":true}'));
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  const { port } = server.address() as AddressInfo;
  try {
    const strict = outboundFetch(false);
    for (const url of [`http://127.0.0.1:${port}/`, `http://localhost:${port}/`, `http://[::ffff:127.0.0.1]:${port}/`, 'file:///etc/passwd']) {
      await strict(url, {}).then(
        () => assert.unreachable(`${url} was fetched`),
        (error: unknown) => assert.match(String((error as Error).cause ?? error), /public|not http|ENOTPUBLIC/),
      );
    }
    assert.equal(await (await outboundFetch(true)(`http://127.0.0.1:${port}/`, {})).json(), { secret: true });
  } finally {
    server.close();
  }
});

test('a body is read no further than its cap', async () => {
  assert.is(await readAtMost(new Response('x'.repeat(10)), 10), 'x'.repeat(10));
  await readAtMost(new Response('x'.repeat(11)), 10).then(() => assert.unreachable('read past the cap'), (error: Error) => assert.match(error.message, /over 10 bytes/));
});

test('a catalog file is checked whole at start, naming the capability and what is wrong', () => {
  const dir = mkdtempSync(join(tmpdir(), 'pact-catalog-'));
  const good = { id: 'my.words', name: 'Words', description: 'Counts words', category: 'text', tags: ['words'], inputSchema: { type: 'object' }, outputSchema: {}, providers: [{ rail: 'http', method: 'POST', resource: 'https://words.example/count', price: '100' }] };
  const write = (content: string) => {
    const file = join(dir, `${Math.random()}.json`);
    writeFileSync(file, content);
    return file;
  };
  try {
    assert.equal(Catalog.entriesOf(write(JSON.stringify({ capabilities: [good] }))).map((entry) => entry.id), ['my.words']);
    assert.equal(Catalog.entriesOf(undefined), []);
    const refusals: [unknown, RegExp][] = [
      ['{ not json', /not a readable JSON catalog/],
      [{ capabilities: {} }, /no \{ "capabilities"/],
      [{ capabilities: [{ ...good, id: 'Bad Id' }] }, /capability 0 \(Bad Id\): id is not a dotted slug/],
      [{ capabilities: [{ ...good, inputSchema: { type: 'no such type' } }] }, /inputSchema is no JSON schema/],
      [{ capabilities: [{ ...good, providers: [{ ...good.providers[0], price: 'abc' }] }] }, /price in micro-USD/],
      [{ capabilities: [{ ...good, providers: [{ rail: 'x402', method: 'POST', resource: 'not a url' }] }] }, /resource URL/],
      [{ capabilities: [{ ...good, providers: [{ ...good.providers[0], method: 'get' }] }] }, /a method \(GET/],
      [{ capabilities: [{ ...good, outputSchema: 'words' }] }, /outputSchema is not an object/],
    ];
    for (const [content, problem] of refusals) assert.throws(() => Catalog.entriesOf(write(typeof content === 'string' ? content : JSON.stringify(content))), problem);
    assert.throws(() => new Catalog(Registry.shipped(), [{ ...good, id: 'weather.forecast' }] as never), /two capabilities weather.forecast/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
