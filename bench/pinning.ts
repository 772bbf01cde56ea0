/**
 * BENCH_PIN=1: the load generator on the machine's last core, the servers (the service, nats-server, the bare
 * server) on the others, so that neither takes CPU from the other unseen. Linux `taskset`; threads started
 * later inherit their creator's cores.
 */
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { settings } from './settings.js';

const last = availableParallelism() - 1;

/** What the run's report says of it. */
export const pinningLines = (): string[] =>
  settings.pin ? [`pinned (BENCH_PIN=1): the load generator on core ${last}, the servers on ${serverCores()}`] : [];

/**
 * `resource` once `pids` are pinned to the load generator's core or to the servers' (nothing happens without
 * BENCH_PIN=1); stopped through `stop` when pinning fails.
 */
export async function pinned<R>(resource: R, pids: number[], role: 'load' | 'server', stop: (resource: R) => Promise<void>): Promise<R> {
  try {
    for (const pid of pids) pin(pid, role === 'load' ? String(last) : serverCores());
  } catch (error) {
    await stop(resource);
    throw error;
  }
  return resource;
}

const serverCores = () => (last <= 1 ? '0' : `0-${last - 1}`);

function pin(pid: number, cores: string): void {
  if (!settings.pin) return;
  try {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cores, String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const said = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`BENCH_PIN=1: taskset (util-linux) could not pin process ${pid} to cores ${cores}: ${said || String(error)}`);
  }
}
