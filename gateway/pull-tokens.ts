/**
 * Per-IP token buckets for `POST /v0/pull` (DECISIONS.md, Agent Stream: a long poll costs more than an
 * immediate pull). Each address gets `perMinute` tokens a minute, holds at most that many, and a pull costs
 * 1 plus one per 5 s it may wait. In memory, per node; at most MAX_ADDRESSES are tracked (the least
 * recently seen is forgotten, which only ever gives it a full bucket).
 */
export class PullTokens {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly perMinute: number) {}

  /** The cost of a pull that may wait `waitSeconds`. */
  static costOf(waitSeconds: number): number {
    return 1 + Math.ceil(waitSeconds / 5);
  }

  /** Takes `cost` tokens of `address` at `now`; when there are too few, the seconds until there are enough. */
  take(address: string, cost: number, now: number): { retryAfter: number } | undefined {
    const rate = this.perMinute / 60_000;
    const bucket = this.buckets.get(address) ?? { tokens: this.perMinute, at: now };
    this.buckets.delete(address); // re-inserted last: the map stays in order of use
    bucket.tokens = Math.min(this.perMinute, bucket.tokens + (now - bucket.at) * rate);
    bucket.at = now;
    this.buckets.set(address, bucket);
    if (this.buckets.size > MAX_ADDRESSES) this.buckets.delete(this.buckets.keys().next().value as string);
    cost = Math.min(cost, this.perMinute); // a bucket smaller than a long poll's cost still lets one through a minute
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return undefined;
    }
    return { retryAfter: Math.max(1, Math.ceil((cost - bucket.tokens) / rate / 1000)) };
  }
}

const MAX_ADDRESSES = 100_000;
