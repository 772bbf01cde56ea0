import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { forget, reapOnExit } from './reaper.js';

const ROOT = resolve(import.meta.dirname, '..', '..');

/** A process of the project (`npm start`, the service) whose output a test reads line by line. */
export class ServiceProcess {
  output = '';
  readonly exited: Promise<number | null>;

  private constructor(readonly child: ChildProcess) {
    reapOnExit(child.pid);
    child.stdout!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => (this.output += chunk.toString()));
    this.exited = new Promise((done) => child.once('exit', (code) => (forget(child.pid), done(code))));
  }

  /** Runs `command args` in the project root with exactly `env` added to PATH and HOME. */
  static run(command: string, args: string[], env: Record<string, string>): ServiceProcess {
    const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root' };
    return new ServiceProcess(spawn(command, args, { cwd: ROOT, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  /** Resolves with the match once the output has a line matching `pattern`; rejects if the process ends first. */
  async waitFor(pattern: RegExp, timeoutMs = 30_000): Promise<RegExpExecArray> {
    const deadline = Date.now() + timeoutMs;
    let ended = false;
    void this.exited.then(() => (ended = true));
    for (;;) {
      const match = pattern.exec(this.output);
      if (match) return match;
      if (ended || Date.now() > deadline) throw new Error(`no ${pattern} in:\n${this.output}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}

/** Whether a process with this pid exists (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  return true;
}
