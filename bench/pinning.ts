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

export function pinLoad(pid: number): void {
  pin(pid, String(last));
}

export function pinServer(pid: number): void {
  pin(pid, serverCores());
}

const serverCores = () => (last <= 1 ? '0' : `0-${last - 1}`);

function pin(pid: number, cores: string): void {
  if (settings.pin) execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', cores, String(pid)], { stdio: 'ignore' });
}
