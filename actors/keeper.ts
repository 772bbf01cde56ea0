import { currentDeadline, type Deadlines } from '../machines/pact/rules.js';
import type { Clock } from '../runtime/clock.js';
import type { CommandSender } from './command-sender.js';

const MAX_TIMER_MS = 3_600_000; // Node fires timers above 2^31-1 ms at once: re-arm at most hourly
const CONCURRENCY = 32;
const RETRY_MS = 1_000;
const ROUNDS = 4;

/** Where the keeper finds deadlines: the read model's index of each open pact's next one. */
export interface DeadlineIndex {
  /** Pacts whose deadline is at or before `time`, at most `limit`, earliest first; written ones only. */
  dueBy(time: number, limit: number): Promise<string[]>;
  /** The earliest deadline in the index, or Infinity. */
  earliest(): Promise<number>;
}

/**
 * When an open pact's next deadline is due, sends a `poke` through the command path, exactly as
 * `POST /pacts/:id/poke` does. It holds no deadlines itself (the read model indexes them, so memory does not
 * grow with pacts): it is told of each record written, to set its timer for the earliest deadline.
 */
export class Keeper {
  private timer: NodeJS.Timeout | undefined;
  private armedFor = Infinity;
  private running: Promise<void> | undefined;
  private lastSeq = 0;
  private stopped = false;

  constructor(
    private readonly bus: CommandSender,
    private readonly clock: Clock,
    private readonly index: DeadlineIndex,
  ) {}

  /** A pact's record was written: its deadline may be the earliest now. */
  track(pact: Deadlines): void {
    const deadline = currentDeadline(pact);
    if (deadline !== null && deadline < this.armedFor) this.arm(deadline);
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
    this.running ??= this.pokeDue().finally(async () => {
      this.running = undefined;
      // What is still due after a tick could not be poked (NATS away, say): try again a second later.
      this.arm(Math.max(await this.index.earliest().catch(() => this.clock.now()), this.clock.now() + RETRY_MS));
    });
    await this.running;
    return this.lastSeq;
  }

  private async pokeDue(): Promise<void> {
    for (let round = 0; round < ROUNDS; round++) {
      const due = await this.index.dueBy(this.clock.now(), CONCURRENCY * 8);
      if (due.length === 0) return;
      for (let i = 0; i < due.length; i += CONCURRENCY) {
        await Promise.all(due.slice(i, i + CONCURRENCY).map((id) => this.poke(id)));
      }
    }
  }

  private async poke(pactId: string): Promise<void> {
    const reply = await this.bus.send(pactId, { type: 'poke' });
    if (reply.ok) this.lastSeq = Math.max(this.lastSeq, reply.seq);
  }

  /** Sets the timer for `next`, the earliest deadline known; a tick re-arms from the index. */
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
