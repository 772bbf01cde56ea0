/**
 * Token buckets per key (a client IP, an address): each holds at most `capacity` tokens and gains
 * `capacity` every `periodMs`. In memory, per node; at most MAX_KEYS are tracked (the least recently seen is
 * forgotten, which only ever gives it a full bucket).
 */
export class TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly capacity: number,
    private readonly periodMs = 60_000,
  ) {}

  /** Takes `cost` tokens of `key` at `now`; when there are too few, the seconds until there are enough. */
  take(key: string, cost: number, now: number): { retryAfter: number } | undefined {
    const rate = this.capacity / this.periodMs;
    const bucket = this.buckets.get(key) ?? { tokens: this.capacity, at: now };
    this.buckets.delete(key); // re-inserted last: the map stays in order of use
    bucket.tokens = Math.min(this.capacity, bucket.tokens + (now - bucket.at) * rate);
    bucket.at = now;
    this.buckets.set(key, bucket);
    if (this.buckets.size > MAX_KEYS) this.buckets.delete(this.buckets.keys().next().value as string);
    cost = Math.min(cost, this.capacity); // a bucket smaller than a cost still lets one through a period
    if (bucket.tokens >= cost) {
      bucket.tokens -= cost;
      return undefined;
    }
    return { retryAfter: Math.max(1, Math.ceil((cost - bucket.tokens) / rate / 1000)) };
  }
}

/**
 * What a pull costs (DECISIONS.md, Agent Stream: a long poll costs more than an immediate pull): 1, plus
 * one per 5 s it may wait.
 */
export const pullCost = (waitSeconds: number): number => 1 + Math.ceil(waitSeconds / 5);

const MAX_KEYS = 100_000;

/** Who a limit counts: an IPv4 address, or an IPv6 address's /64 (one host usually holds a whole /64). */
export function clientOf(ip: string): string {
  if (!ip.includes(':') || ip.startsWith('::ffff:')) return ip;
  const [head = '', tail] = ip.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = tail === undefined ? front : [...front, ...Array(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups.slice(0, 4).map((g) => g.toLowerCase().replace(/^0+(?=.)/, '')).join(':')}::/64`;
}
