/**
 * The service's main-thread GC pauses (bench/gc-pauses-preload.mjs records them): the time its young and old
 * generations' collections stop the thread that answers requests: a figure of the service's allocation and
 * heap settings, next to its CPU.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixed } from './stats.js';

/** A URL, not a path: `--import` takes a module specifier (a path holding `#` or `%` would not resolve). */
const PRELOAD = new URL('./gc-pauses-preload.mjs', import.meta.url).href;
/** The preload writes every 250 ms: a window is read this long after it ends. */
const FLUSH_WAIT_MS = 600;

/** The kinds the preload writes, in the order the line shows them. */
const KINDS = ['scavenge', 'mark-compact', 'incremental', 'weak-callbacks', 'other'] as const;
type Kind = (typeof KINDS)[number];

export interface Pause {
  endedAt: number;
  kind: Kind;
  ms: number;
}

/** The pauses of every service this bench starts, one file for all (the services run one after the other). */
export const gcPauses = {
  file: join(tmpdir(), `pact-bench-gc-${process.pid}.log`),
  /** What the service is started with so that it records its pauses. */
  get env() {
    return { BENCH_GC_FILE: this.file };
  },
  nodeArgs: ['--import', PRELOAD],
  /**
   * The pauses that ended between the two times (epoch ms), once the preload has written them. The preload
   * stamps them from its process's start time and monotonic clock: off from `Date.now()` by no more than the
   * wall clock drifts during one bench run.
   */
  async between(fromMs: number, toMs: number): Promise<Pause[]> {
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, toMs + FLUSH_WAIT_MS - Date.now())));
    const text = existsSync(this.file) ? readFileSync(this.file, 'utf8') : '';
    return parsePauses(text).filter((pause) => pause.endedAt >= fromMs && pause.endedAt <= toMs);
  },
  remove(): void {
    rmSync(this.file, { force: true });
  },
};

export function parsePauses(text: string): Pause[] {
  return text
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [endedAt, kind, ms] = line.split(' ');
      return { endedAt: Number(endedAt), kind: kind as Kind, ms: Number(ms) };
    });
}

const pausedMs = (pauses: Pause[]) => pauses.reduce((sum, pause) => sum + pause.ms, 0);

/** One line: the pauses of each kind, their total, and that per request answered (kinds with no pause left out). */
export function gcPauseLine(pauses: Pause[], requests: number): string {
  const total = pausedMs(pauses);
  const kinds = KINDS.flatMap((kind) => {
    const ofKind = pauses.filter((pause) => pause.kind === kind);
    return ofKind.length === 0 ? [] : [`${kind} ${ofKind.length}× ${fixed(pausedMs(ofKind), 1)} ms`];
  });
  const perRequest = requests > 0 ? `: ${fixed((total * 1000) / requests, 1)} µs per request` : '';
  return `main-thread GC pauses  ${kinds.length > 0 ? kinds.join(', ') : 'none'}; ${fixed(total, 1)} ms in all${perRequest}`;
}
