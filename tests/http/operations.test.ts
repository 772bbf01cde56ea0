import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { startNatsServer } from '../../runtime/nats-server.js';
import { forget, reapOnExit } from '../support/reaper.js';
import { alive, ServiceProcess } from '../support/service-process.js';
import { Stack } from '../support/stack.js';

// Running the service as an operator does: `npm start`, signals, the private nats-server, and a data
// directory that meets another journal.

const LISTENING = /pact listening on (http:\/\/127\.0\.0\.1:\d+)/;
const PRIVATE_NATS = /private nats-server at \S+ \((started|reused), pid (\d+)\)/;

async function withDataDir(run: (dir: string) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'pact-ops-'));
  try {
    await run(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const PRIVATE = (dataDir: string) => ({ PACT_PORT: '0', WALLET_PORT: '0', PACT_DATA_DIR: dataDir });
const npmStart = (dataDir: string) => ServiceProcess.run('npm', ['start'], PRIVATE(dataDir));
/** The service process itself, as `npm start` runs it. */
const service = (dataDir: string, env: Record<string, string> = PRIVATE(dataDir)) =>
  ServiceProcess.run(process.execPath, ['--import', 'tsx', 'runtime/main.ts'], env);

async function answers(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`)).ok;
  } catch {
    return false;
  }
}

async function gone(pid: number, withinMs = 10_000): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  return !alive(pid);
}

/** Which private nats-server `running` says it uses, and whether it started or reused it; the test reaps it. */
async function privateNatsOf(running: ServiceProcess): Promise<{ how: string; pid: number }> {
  const [, how, pid] = await running.waitFor(PRIVATE_NATS);
  reapOnExit(Number(pid));
  return { how: how!, pid: Number(pid) };
}

/** Sends `signal` to `running`, waits for it to end, and checks its private nats-server `pid` went too. */
async function assertStopsWithNats(running: ServiceProcess, pid: number, signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
  running.child.kill(signal);
  await running.exited;
  assert.ok(await gone(pid), `nats-server ${pid} still runs:\n${running.output}`);
  forget(pid);
}

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  test(`${signal} to npm start stops the service and its private nats-server`, async () => {
    await withDataDir(async (dir) => {
      const npm = npmStart(dir);
      const { how, pid } = await privateNatsOf(npm);
      const [, url] = await npm.waitFor(LISTENING);
      assert.is(how, 'started');
      assert.ok(await answers(url!));
      await assertStopsWithNats(npm, pid, signal);
      assert.not.ok(await answers(url!), 'the service still answers');
    });
  });
}

test('a private nats-server left by a killed run is reused, and stopped with the service that reused it', async () => {
  await withDataDir(async (dir) => {
    const first = service(dir);
    const { pid } = await privateNatsOf(first);
    await first.waitFor(LISTENING);
    first.child.kill('SIGKILL');
    await first.exited;
    assert.ok(alive(pid), 'the private server outlived the killed run');
    const second = service(dir);
    const reused = await privateNatsOf(second);
    await second.waitFor(LISTENING);
    assert.equal(reused, { how: 'reused', pid });
    await assertStopsWithNats(second, pid);
  });
});

test('a recorded pid that is no longer our nats-server is not trusted', async () => {
  await withDataDir(async (dir) => {
    writeFileSync(join(dir, 'nats-server.json'), JSON.stringify({ url: 'nats://127.0.0.1:1', pid: process.pid }));
    const started = service(dir);
    const { how, pid } = await privateNatsOf(started);
    assert.is(how, 'started');
    await started.waitFor(LISTENING);
    await assertStopsWithNats(started, pid);
  });
});

test('a private nats-server that takes clients without a user (an older run\'s) is replaced, not reused', async () => {
  await withDataDir(async (dir) => {
    const open = await startNatsServer(join(dir, 'nats'));
    reapOnExit(open.pid);
    writeFileSync(join(dir, 'nats-server.json'), JSON.stringify({ url: open.url, pid: open.pid }));
    const started = service(dir);
    const { how, pid } = await privateNatsOf(started);
    assert.is(how, 'started');
    assert.ok(await gone(open.pid), 'the open server was stopped');
    forget(open.pid);
    await assertStopsWithNats(started, pid);
  });
});

test('a start that fails stops the private nats-server it started', async () => {
  await withDataDir(async (dir) => {
    const taken = createServer().listen(0, '127.0.0.1');
    await new Promise((resolve) => taken.once('listening', resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const failed = service(dir, { ...PRIVATE(dir), PACT_PORT: String(port) });
      assert.is(await failed.exited, 1);
      assert.match(failed.output, /could not start/);
      const { pid } = JSON.parse(readFileSync(join(dir, 'nats-server.json'), 'utf8')) as { pid: number };
      assert.ok(await gone(pid), `nats-server ${pid} outlived the failed start`);
    } finally {
      taken.close();
    }
  });
});

test('a data directory built from one journal refuses to start against another', async () => {
  const stack = await Stack.start();
  const other = await startNatsServer(join(stack.root, 'other-nats'));
  reapOnExit(other.pid);
  try {
    await stack.kill('SIGTERM');
    const refused = service(stack.dataDir, { PACT_PORT: '0', WALLET_PORT: '0', PACT_DATA_DIR: stack.dataDir, NATS_URL: other.url });
    assert.is(await refused.exited, 1);
    assert.match(refused.output, /built from the journal .* holds/);
    await stack.startServer(); // its own journal: it starts
  } finally {
    await other.stop();
    forget(other.pid);
    await stack.stop();
  }
});

test('SIGTERM: a long poll in flight is answered, sockets that never sent a request do not hold the stop', async () => {
  const stack = await Stack.start();
  const sockets: Socket[] = [];
  try {
    for (const url of [stack.url, stack.walletUrl]) {
      for (let i = 0; i < 3; i++) {
        const socket = connect(Number(new URL(url).port), '127.0.0.1');
        socket.on('error', () => undefined);
        await new Promise((resolve) => socket.once('connect', resolve));
        sockets.push(socket);
      }
    }
    const pull = stack.client.pull({ waitSeconds: 3 }).then(({ status }) => status, (error: unknown) => `no answer: ${String(error)}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const pid = stack.serverPid!;
    process.kill(pid, 'SIGTERM');
    // Node's own headers timeout would end the silent sockets after a minute.
    assert.ok(await gone(pid, 20_000), `the service still runs 20 s after SIGTERM:\n${stack.serverLog()}`);
    assert.is(await pull, 200, 'the long poll in flight got its answer');
    assert.is(stack.serverExitCode, 0, stack.serverLog());
  } finally {
    for (const socket of sockets) socket.destroy();
    await stack.stop();
  }
});

test.run();
