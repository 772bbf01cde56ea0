import type { Measured } from './jobs.js';
import type { CpuUse } from './processes.js';
import { fixed, latencySummary } from './stats.js';

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

/** CPU seconds each process used, and that as a share of one core over the time it was measured. */
export function cpuLines({ seconds, wallMs }: CpuUse): string[] {
  return [...seconds].map(([name, used]) => `${name.padEnd(18)} ${fixed(used, 2).padStart(6)} s CPU = ${fixed((used * 100_000) / wallMs, 0).padStart(3)}% of one core`);
}
