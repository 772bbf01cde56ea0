import { fork, type ChildProcess } from 'node:child_process';
import { join, resolve } from 'node:path';
import { forget, reapOnExit } from '../tests/support/reaper.js';
import { pinned } from './pinning.js';

const ROOT = resolve(import.meta.dirname, '..');

/** Forks a bench module under tsx with an IPC channel; it is killed when the bench exits, however it exits. */
export function forkBenchModule(file: string): ChildProcess {
  const child = fork(join(ROOT, 'bench', file), [], { cwd: ROOT, execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  reapOnExit(child.pid);
  child.once('exit', () => forget(child.pid));
  return child;
}

/** The next IPC message of `child`; rejects if the child exits first. */
export function nextMessage<T>(child: ChildProcess): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onExit = (code: number | null) => {
      child.off('message', onMessage);
      reject(new Error(`bench child ${child.pid} exited with ${code}`));
    };
    const onMessage = (message: T) => {
      child.off('exit', onExit);
      resolve(message);
    };
    child.once('message', onMessage);
    child.once('exit', onExit);
  });
}

export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

export interface BareServer {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/** Starts bench/bare-server.ts answering `body` on GET /pacts/:id and GET /offers. */
export async function startBareServer(body: string): Promise<BareServer> {
  const child = forkBenchModule('bare-server.ts');
  child.send({ body });
  const { port } = await nextMessage<{ port: number }>(child);
  const server = { url: `http://127.0.0.1:${port}`, pid: child.pid!, stop: () => stopChild(child) };
  return pinned(server, () => [server.pid], 'server', (started) => started.stop());
}
