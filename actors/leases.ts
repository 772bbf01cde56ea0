import type { KV } from '@nats-io/kv';

/**
 * Partition leases in a NATS KV bucket with a bucket-level TTL. A host holds a partition while it keeps
 * refreshing its key; when it dies the key expires and another host can take it. The host id is stable
 * across restarts of the same node, so a restarted host takes its own partitions back at once.
 */
export class Leases {
  private readonly revisions = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly kv: KV,
    private readonly hostId: string,
    private readonly partitions: number,
    private readonly onChange: (owned: ReadonlySet<number>) => Promise<void>,
  ) {}

  async start(refreshMs: number): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh().catch((e) => console.error('lease refresh failed', e)), refreshMs);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  get owned(): ReadonlySet<number> {
    return new Set(this.revisions.keys());
  }

  private async refresh(): Promise<void> {
    const before = [...this.revisions.keys()].sort().join();
    for (let p = 0; p < this.partitions; p++) await this.claim(p);
    if ([...this.revisions.keys()].sort().join() !== before) await this.onChange(this.owned);
  }

  private async claim(partition: number): Promise<void> {
    const key = `p${partition}`;
    try {
      const entry = await this.kv.get(key);
      const holder = entry && entry.operation === 'PUT' ? entry.string() : undefined;
      if (holder === undefined) {
        this.revisions.set(partition, await this.kv.create(key, this.hostId));
      } else if (holder === this.hostId) {
        this.revisions.set(partition, await this.kv.update(key, this.hostId, entry!.revision));
      } else {
        this.revisions.delete(partition);
      }
    } catch {
      this.revisions.delete(partition); // lost a race or NATS is away: not ours until the next refresh
    }
  }
}
