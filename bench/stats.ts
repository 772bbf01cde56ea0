/** Nearest-rank percentile (p in 0..100) of `sorted`, which must be sorted ascending; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

/** "p50 … ms, p99 … ms, max … ms (n)" of a list of latencies in milliseconds. */
export function latencySummary(latenciesMs: readonly number[]): string {
  const sorted = [...latenciesMs].sort((a, b) => a - b);
  const ms = (p: number) => `${fixed(percentile(sorted, p), 2)} ms`;
  return `p50 ${ms(50)}, p99 ${ms(99)}, max ${ms(100)} (${sorted.length})`;
}

/** Counts of string keys, e.g. failures by route, status and error code. */
export class Tally {
  private readonly counts = new Map<string, number>();

  add(key: string): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }

  get total(): number {
    let sum = 0;
    for (const n of this.counts.values()) sum += n;
    return sum;
  }

  entries(): [string, number][] {
    return [...this.counts].sort((a, b) => b[1] - a[1]);
  }
}

export const fixed = (n: number, digits = 1): string => n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits });

/** The middle of `values`, or the mean of the two middle ones when their number is even; NaN when empty. */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length / 2;
  return Number.isInteger(middle) ? (sorted[middle - 1]! + sorted[middle]!) / 2 : sorted[Math.floor(middle)]!;
}
