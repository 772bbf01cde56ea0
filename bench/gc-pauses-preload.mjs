// Loaded into the benchmarked service (`--import`, before tsx: hence plain JavaScript). Appends each GC pause
// of the service's main thread to BENCH_GC_FILE, as `<epoch ms at its end> <kind> <ms>` lines, written a few
// times a second and at exit. bench/gc-pauses.ts reads them. A write that fails loses those lines, never the service.
import { appendFileSync } from 'node:fs';
import { PerformanceObserver, constants } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const file = process.env.BENCH_GC_FILE;
const KINDS = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge',
  [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact',
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak-callbacks',
};
let lines = [];

function flush() {
  if (lines.length === 0) return;
  const text = `${lines.join('\n')}\n`;
  lines = [];
  try {
    appendFileSync(file, text);
  } catch {
    // the bench's figure misses these pauses; the service goes on
  }
}

if (file && isMainThread) {
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      lines.push(`${Math.round(performance.timeOrigin + entry.startTime + entry.duration)} ${KINDS[entry.detail.kind] ?? 'other'} ${entry.duration.toFixed(3)}`);
    }
  }).observe({ entryTypes: ['gc'] });
  setInterval(flush, 250).unref();
  process.on('exit', flush);
}
