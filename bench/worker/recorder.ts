import type { Measured } from '../jobs.js';
import { Tally } from '../stats.js';

/** Latencies by route, failures and completed ids of one job, as the load generator collects them. */
export class Recorder {
  private readonly byRoute = new Map<string, number[]>();
  private readonly failures = new Tally();
  readonly ids: string[] = [];

  record(route: string, ms: number): void {
    const latencies = this.byRoute.get(route) ?? [];
    this.byRoute.set(route, latencies);
    latencies.push(ms);
  }

  fail(why: string): void {
    this.failures.add(why);
  }

  measured(wallMs: number): Measured {
    return { wallMs, byRoute: Object.fromEntries(this.byRoute), failures: this.failures.entries(), ids: this.ids };
  }
}

/** Runs `work` with a fresh recorder and reports what it recorded over the time it took. */
export async function measure(work: (recorder: Recorder) => Promise<void>): Promise<Measured> {
  const recorder = new Recorder();
  const start = performance.now();
  await work(recorder);
  return recorder.measured(performance.now() - start);
}
