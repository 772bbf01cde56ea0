import { currentDeadline } from '../machines/pact/rules.js';
import type { Pact } from '../machines/pact/types.js';
import type { Clock } from '../runtime/clock.js';
import type { CommandSender } from './command-sender.js';

const MAX_TIMER_MS = 3_600_000; // Node fires timers above 2^31-1 ms at once: re-arm at most hourly
const CONCURRENCY = 32;
const RETRY_MS = 1_000;

/**
 * Keeps each open pact's next deadline and, when one is due, sends a `poke` through the command path,
 * exactly as `POST /pacts/:id/poke` does.
 */
export class Keeper {
  private readonly deadlines = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;
  private running: Promise<void> | undefined;
  private lastSeq = 0;
  private stopped = false;

  constructor(
    private readonly bus: CommandSender,
    private readonly clock: Clock,
  ) {}

  track(pact: Pact): void {
    const deadline = currentDeadline(pact);
    if (deadline === null) {
      this.deadlines.delete(pact.id);
      return;
    }
    this.deadlines.set(pact.id, deadline);
    if (deadline < this.armedFor) this.arm(deadline);
  }

  get size(): number {
    return this.deadlines.size;
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  /**
   * Pokes every pact whose deadline is due, until none is (a poke may make the next one due). Resolves to
   * the highest journal position its pokes reached, for a reader that must see their outcome.
   */
  async tick(): Promise<number> {
    this.running ??= this.pokeDue().finally(() => {
      this.running = undefined;
      // What is still due after a tick could not be poked (NATS away, say): try again a second later.
      this.arm(Math.max(this.earliest(), this.clock.now() + RETRY_MS));
    });
    await this.running;
    return this.lastSeq;
  }

  private async pokeDue(): Promise<void> {
    for (let round = 0; round < 4; round++) {
      const now = this.clock.now();
      const due = [...this.deadlines].filter(([, deadline]) => deadline <= now).map(([id]) => id);
      if (due.length === 0) return;
      for (let i = 0; i < due.length; i += CONCURRENCY) {
        await Promise.all(due.slice(i, i + CONCURRENCY).map((id) => this.poke(id)));
      }
    }
  }

  private async poke(pactId: string): Promise<void> {
    const reply = await this.bus.send(pactId, { type: 'poke' });
    if (!reply.ok) return;
    this.lastSeq = Math.max(this.lastSeq, reply.seq);
    this.track(reply.pact);
  }

  private earliest(): number {
    let earliest = Infinity;
    for (const deadline of this.deadlines.values()) earliest = Math.min(earliest, deadline);
    return earliest;
  }

  /** Sets the timer for `next`, the earliest deadline known; a tick re-arms from all of them. */
  private arm(next: number): void {
    if (this.stopped || this.running) return;
    clearTimeout(this.timer);
    this.armedFor = next;
    if (next === Infinity) return;
    const delay = Math.min(Math.max(next - this.clock.now(), 0), MAX_TIMER_MS);
    this.timer = setTimeout(() => {
      this.armedFor = Infinity;
      void this.tick();
    }, delay);
    this.timer.unref();
  }
}
