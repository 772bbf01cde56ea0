/**
 * BENCH_PIN=1: the bench's own process and its load generator on the last core it may use, the servers (the
 * service, nats-server, the bare server) on the others, so that neither takes CPU from the other unseen.
 * Linux `taskset`; threads started later inherit their creator's cores. On two cores the service, its
 * verification thread and nats-server then share one: pinned figures compare with each other, not with
 * unpinned ones.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { settings } from './settings.js';

/** The cores this process may run on (`Cpus_allowed_list`, e.g. `0-3,6`), in order. */
function allowedCores(): number[] {
  const list = /^Cpus_allowed_list:\s*(.+)$/m.exec(readFileSync('/proc/self/status', 'utf8'))?.[1] ?? '';
  return list.split(',').flatMap((range) => {
    const [from, to = from] = range.split('-').map(Number);
    return Array.from({ length: to! - from! + 1 }, (_, i) => from! + i);
  });
}

const cores = settings.pin ? allowedCores() : [];
const loadCores = cores.slice(-1).join(',');
const serverCores = cores.slice(0, -1).join(',');

/** Checks that pinning can be done and pins the bench's own process; what the run's report says of it. */
export function startPinning(): string[] {
  if (!settings.pin) return [];
  if (cores.length < 2) throw new Error(`BENCH_PIN=1 needs two cores or more; this process may use ${cores.length}`);
  pin(process.pid, loadCores);
  return [`pinned (BENCH_PIN=1): the bench and its load generator on core ${loadCores}, the servers on ${serverCores}`];
}

/**
 * `resource` once the processes `pids` names are pinned to the load generator's core or to the servers'
 * (nothing happens without BENCH_PIN=1); stopped through `stop` when that fails.
 */
export async function pinned<R>(resource: R, pids: () => number[], role: 'load' | 'server', stop: (resource: R) => Promise<void>): Promise<R> {
  if (!settings.pin) return resource;
  try {
    for (const pid of pids()) pin(pid, role === 'load' ? loadCores : serverCores);
  } catch (error) {
    await stop(resource);
    throw error;
  }
  return resource;
}

function pin(pid: number, list: string): void {
  try {
    execFileSync('taskset', ['--all-tasks', '--cpu-list', '--pid', list, String(pid)], { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    const said = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`BENCH_PIN=1: taskset (util-linux) could not pin process ${pid} to cores ${list}: ${said || String(error)}`);
  }
}
