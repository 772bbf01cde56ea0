/** CPU time and memory of the bench's processes, read from /proc (Linux). */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import type { Stack } from '../tests/support/stack.js';
import { fixed } from './stats.js';

const TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));

/** Processes by the name the report gives them. */
export type Processes = Record<string, number>;

/** CPU seconds (user + system) so far of each process; one that is gone is left out. */
export function cpuSeconds(processes: Processes): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const [name, pid] of Object.entries(processes)) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      seconds.set(name, (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND);
    } catch {
      // the process is gone
    }
  }
  return seconds;
}

/** CPU seconds each process used over `wallMs` of wall time. */
export interface CpuUse {
  seconds: Map<string, number>;
  wallMs: number;
}

/** Runs `work` and measures the CPU each of `processes` used meanwhile; `startedAt` (epoch ms) is when it began. */
export async function cpuUsedDuring<T>(processes: Processes, work: () => Promise<T>): Promise<{ result: T; cpu: CpuUse; startedAt: number }> {
  const before = cpuSeconds(processes);
  const startedAt = Date.now();
  const start = performance.now();
  const result = await work();
  const wallMs = performance.now() - start;
  const seconds = new Map([...cpuSeconds(processes)].map(([name, after]) => [name, after - (before.get(name) ?? after)]));
  return { result, cpu: { seconds, wallMs }, startedAt };
}

/** How long an `untilIdle` wait lasted, and whether the processes went idle in that time. */
export interface IdleWait {
  seconds: number;
  idle: boolean;
  /** The span over which the processes' CPU was compared with IDLE_SHARE. */
  windowMs: number;
}

/** Under this share of one core a process counts as idle. */
const IDLE_SHARE = 0.05;

/**
 * Waits until `processes` together use less than IDLE_SHARE of a core over `windowMs` (work left from
 * before, such as LevelDB's compactions), at most `maxSeconds`.
 */
export async function untilIdle(processes: Processes, { windowMs = 1_000, maxSeconds = 300 } = {}): Promise<IdleWait> {
  const started = performance.now();
  const seconds = () => (performance.now() - started) / 1000;
  const used = () => [...cpuSeconds(processes).values()].reduce((a, b) => a + b, 0);
  for (let before = used(); seconds() < maxSeconds; ) {
    await new Promise((resolve) => setTimeout(resolve, windowMs));
    const now = used();
    if (now - before < (IDLE_SHARE * windowMs) / 1000) return { seconds: seconds(), idle: true, windowMs };
    before = now;
  }
  return { seconds: seconds(), idle: false, windowMs };
}

/** What an `untilIdle` wait came to, for the report. */
export const idleWaitText = ({ seconds, idle, windowMs }: IdleWait) =>
  `${idle ? 'idle' : 'still busy'} (under ${IDLE_SHARE * 100}% of a core over ${windowMs / 1000} s) after ${fixed(seconds)} s`;

/** CPU use over several spans, as one. */
export function addedCpu(a: CpuUse, b: CpuUse): CpuUse {
  const seconds = new Map(a.seconds);
  for (const [name, used] of b.seconds) seconds.set(name, (seconds.get(name) ?? 0) + used);
  return { seconds, wallMs: a.wallMs + b.wallMs };
}

/** The resident set of a process in MiB (VmRSS of /proc/<pid>/status). */
export const rssMiB = (pid: number): number => statusMiB(pid).VmRSS;

type StatusField = 'VmRSS' | 'RssAnon' | 'RssFile' | 'VmHWM';
const STATUS_FIELDS: StatusField[] = ['VmRSS', 'RssAnon', 'RssFile', 'VmHWM'];

/**
 * A process's resident set in MiB (/proc/<pid>/status): all of it (`VmRSS`), of which its anonymous memory
 * (`RssAnon`: heaps, stacks) and its pages of mapped files (`RssFile`: the node binary and libraries, and the
 * LevelDB tables it has mapped to read; `RssShmem`, the rest, is not shown); and the most it has had resident
 * (`VmHWM`, the kernel's high-water mark, since the process started or `resetPeakRss`: peaks between samples count).
 */
export function statusMiB(pid: number): Record<StatusField, number> {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Object.fromEntries(STATUS_FIELDS.map((name) => [name, fieldMiB(status, name, pid)])) as Record<StatusField, number>;
}

function fieldMiB(status: string, name: StatusField, pid: number): number {
  const kib = new RegExp(`^${name}:\\s+(\\d+) kB$`, 'm').exec(status)?.[1];
  if (kib === undefined) throw new Error(`no ${name} in /proc/${pid}/status`);
  return Number(kib) / 1024;
}

/** Starts the process's peak (`VmHWM`) again from its RSS now (Linux: 5 written to clear_refs); false where that is refused. */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    return true;
  } catch {
    return false;
  }
}

/** The name the report gives the service's process. */
export const SERVICE_PROCESS = 'pact service';

/** The service process of a running stack and its own nats-server (the bench's stacks start one each). */
export const stackProcesses = (stack: Stack): Processes => ({ [SERVICE_PROCESS]: stack.serverPid!, 'nats-server': stack.natsPid! });
