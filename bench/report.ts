import { cpus } from 'node:os';
import type { Measured } from './jobs.js';
import type { CpuUse } from './processes.js';
import { fixed, latencySummary } from './stats.js';

/** The machine's cores, whatever cores this process is pinned to (BENCH_PIN): what every process shares. */
export const MACHINE_CORES = cpus().length;

export const print = (lines: string[], indent = '  ') => lines.forEach((line) => console.log(`${indent}${line}`));

export const answered = (measured: Measured): number => Object.values(measured.byRoute).reduce((sum, ms) => sum + ms.length, 0);

/** Requests answered per second over the job's time. */
export const perSecond = (measured: Measured): number => answered(measured) / (measured.wallMs / 1000);

export const routeLines = (measured: Measured): string[] =>
  Object.entries(measured.byRoute).map(([route, ms]) => `${route.padEnd(22)} ${latencySummary(ms)}`);

export function failureLines(title: string, measured: Measured): string[] {
  const total = measured.failures.reduce((sum, [, n]) => sum + n, 0);
  if (total === 0) return [`${title}: none`];
  return [`${title}: ${total}`, ...measured.failures.map(([why, n]) => `  ${String(n).padStart(6)}  ${why}`)];
}

/**
 * Each process's CPU per request answered, and what the cores could answer at most at that cost: the
 * bound on a machine where every process shares them.
 */
export function cpuPerRequestLines({ seconds }: CpuUse, requests: number, cores: number): string[] {
  if (requests === 0) return ['no request was answered'];
  const micros = [...seconds].map(([name, used]) => [name, (used * 1e6) / requests] as const);
  const total = micros.reduce((sum, [, us]) => sum + us, 0);
  return [
    ...micros.map(([name, us]) => `${name.padEnd(18)} ${fixed(us, 0).padStart(6)} µs`),
    `${'all of them'.padEnd(18)} ${fixed(total, 0).padStart(6)} µs: the machine's ${cores} cores at 100% would answer at most ${fixed((cores * 1e6) / total)} /s`,
  ];
}

/** CPU seconds each process used, and that as a share of one core over the time it was measured. */
export function cpuLines({ seconds, wallMs }: CpuUse): string[] {
  return [...seconds].map(([name, used]) => `${name.padEnd(18)} ${fixed(used, 2).padStart(6)} s CPU = ${fixed((used * 100_000) / wallMs, 0).padStart(3)}% of one core`);
}
