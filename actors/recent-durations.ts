/** The last `capacity` durations of something, in milliseconds, and their median and 99th percentile. */
export class RecentDurations {
  private readonly durations: Float64Array;
  private added = 0;

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`capacity must be a whole number from 1: ${capacity}`);
    this.durations = new Float64Array(capacity);
  }

  add(ms: number): void {
    this.durations[this.added % this.capacity] = ms;
    this.added++;
  }

  /** How many were ever added, and the nearest-rank p50 and p99 (ms, two decimals) of the `last` held. */
  summary(): { count: number; last: number; p50Ms: number | null; p99Ms: number | null } {
    const held = this.durations.slice(0, Math.min(this.added, this.capacity)).sort();
    const at = (p: number) => (held.length === 0 ? null : Math.round(held[Math.ceil((p / 100) * held.length) - 1]! * 100) / 100);
    return { count: this.added, last: held.length, p50Ms: at(50), p99Ms: at(99) };
  }
}
