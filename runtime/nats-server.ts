import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
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
 * Starts `nats-server` with JetStream on a free loopback port, its store in `storeDir`, and resolves once it
 * accepts clients. Its log goes to `<storeDir>.log`, a file rather than a pipe, so that the server outlives
 * a killed parent (a Go program writing to a closed pipe dies of SIGPIPE) and an operator can read it.
 */
export async function startNatsServer(storeDir: string, extraArgs: string[] = []): Promise<NatsServerProcess> {
  const binary = findNatsServer();
  if (!binary) throw new Error('nats-server is not installed (apt-get install nats-server) and no NATS_URL answers');
  mkdirSync(storeDir, { recursive: true });
  const logFile = `${storeDir}.log`;
  const log = openSync(logFile, 'w');
  // Its own process group: a signal to the service's group (Ctrl-C, `timeout`) must not stop it before the
  // service has drained its connections; the service stops it itself, last.
  const child = spawn(binary, ['-a', '127.0.0.1', '-p', '-1', '-js', '-sd', storeDir, ...extraArgs], { stdio: ['ignore', 'ignore', log], detached: true });
  closeSync(log);
  const port = await listeningPort(child, logFile);
  return { url: `nats://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopProcess(child) };
}

/** Reads the server's log until it says where it listens and that it is ready. */
async function listeningPort(child: ChildProcess, logFile: string): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const log = readFileSync(logFile, 'utf8');
    const match = /Listening for client connections on [^\s]+:(\d+)/.exec(log);
    if (match && /Server is ready/.test(log)) return Number(match[1]);
    if (child.exitCode !== null || child.signalCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`nats-server did not start:\n${log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Whether `pid` is, right now, a nats-server with its store in `storeDir` (Linux: /proc). */
export function isNatsServer(pid: number, storeDir: string): boolean {
  try {
    const args = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return /nats-server$/.test(args[0] ?? '') && args.includes(storeDir);
  } catch {
    return false;
  }
}

/** Stops a server this process did not start (a private one reused from an earlier run) and waits for it. */
export async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return; // already gone
  }
  for (let waited = 0; waited < 5_000; waited += 50) {
    if (!existsSync(`/proc/${pid}`)) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  process.kill(pid, 'SIGKILL');
}
