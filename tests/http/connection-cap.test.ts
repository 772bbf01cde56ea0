import { connect as connectTcp, type Socket } from 'node:net';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';

// PACT_MAX_CONNECTIONS: connections past the cap are closed at once, and the server goes on answering
// once the held ones are gone.

const CAP = 3;

/** Opens a TCP connection and resolves with it and whether the server closed it within `ms`. */
async function openAndWatch(port: number, ms: number): Promise<{ socket: Socket; closed: Promise<boolean> }> {
  const socket = connectTcp(port, '127.0.0.1');
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.resume();
  const closed = new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), ms);
    socket.once('close', () => (clearTimeout(timer), resolve(true)));
  });
  return { socket, closed };
}

test('connections past PACT_MAX_CONNECTIONS are closed at once', async () => {
  const stack = await Stack.start({ env: { PACT_MAX_CONNECTIONS: String(CAP) } });
  const port = Number(new URL(stack.url).port);
  const held: Socket[] = [];
  try {
    const watched = [];
    for (let i = 0; i <= CAP; i++) watched.push(await openAndWatch(port, 1_000));
    held.push(...watched.map((w) => w.socket));
    const closed = await Promise.all(watched.map((w) => w.closed));
    assert.ok(closed.some(Boolean), `none of ${CAP + 1} connections was refused`);
    assert.ok(closed.filter((c) => !c).length <= CAP, 'no more than the cap are held');
    for (const socket of held) socket.destroy();
    await new Promise((r) => setTimeout(r, 100));
    assert.is((await stack.client.request('GET', '/health')).status, 200, 'the server answers again');
  } finally {
    for (const socket of held) socket.destroy();
    await stack.stop();
  }
});

test.run();
