import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';

export interface NatsServerProcess {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

const CANDIDATES = ['nats-server', '/usr/sbin/nats-server', '/usr/bin/nats-server', '/usr/local/bin/nats-server'];

export function findNatsServer(): string | undefined {
  const onPath = (process.env.PATH ?? '').split(':').map((dir) => join(dir, 'nats-server'));
  return [...onPath, ...CANDIDATES.slice(1)].find((file) => existsSync(file));
}

/**
 * Starts `nats-server` with JetStream on a free loopback port, its store in `storeDir`,
 * and resolves once it accepts clients.
 */
export async function startNatsServer(storeDir: string, extraArgs: string[] = []): Promise<NatsServerProcess> {
  const binary = findNatsServer();
  if (!binary) throw new Error('nats-server is not installed (apt-get install nats-server) and no NATS_URL answers');
  mkdirSync(storeDir, { recursive: true });
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', storeDir, ...extraArgs], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const port = await listeningPort(child);
  return { url: `nats://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopProcess(child) };
}

function listeningPort(child: ChildProcess): Promise<number> {
  return new Promise((resolve, reject) => {
    let log = '';
    const timer = setTimeout(() => fail(new Error(`nats-server did not start:\n${log}`)), 15_000);
    const fail = (error: Error) => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    const onEarlyExit = (code: number | null) => fail(new Error(`nats-server exited with ${code}:\n${log}`));
    child.once('exit', onEarlyExit);
    child.stderr!.on('data', (chunk: Buffer) => {
      log += chunk.toString();
      const match = /Listening for client connections on [^\s]+:(\d+)/.exec(log);
      if (match && /Server is ready/.test(log)) {
        clearTimeout(timer);
        child.off('exit', onEarlyExit);
        child.stderr!.resume();
        resolve(Number(match[1]));
      }
    });
  });
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}
