import { MAX_BACKLOG, type JournalMessage } from './journal-follower.js';

const RETRY_MS = 1_000;

/**
 * What a projector (or the pact notifier) takes from its journal follower: messages written in batches, the next batch being
 * whatever arrived while the last was written. A batch whose write fails is written again a second later, before
 * anything newer. The follower is held back (the promise `arrive` returns) once the backlog is full, in messages
 * or, when `maxBytes` is given, in bytes.
 */
export class ArrivalBatches {
  private arrivals: JournalMessage[] = [];
  private arrivedBytes = 0;
  private writing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    /** Names the projector in the log. */
    private readonly what: string,
    /** Writes one batch, in journal order, and does what follows it (waiters, listeners); throws to be tried again. */
    private readonly write: (batch: JournalMessage[]) => Promise<void>,
    private readonly maxBytes = Infinity,
  ) {}

  arrive(message: JournalMessage): Promise<void> | undefined {
    this.arrivals.push(message);
    this.arrivedBytes += message.data.length;
    if (!this.writing && !this.stopped) this.writing = this.writeArrivals().finally(() => (this.writing = undefined));
    return this.arrivals.length >= MAX_BACKLOG || this.arrivedBytes >= this.maxBytes ? this.writing : undefined;
  }

  /** Takes nothing more (call it before stopping the follower: one held back by a full backlog is let go). */
  halt(): void {
    this.stopped = true;
  }

  /** Resolves once the batch being written, if any, is done. */
  async finished(): Promise<void> {
    await this.writing;
  }

  private async writeArrivals(): Promise<void> {
    while (this.arrivals.length > 0 && !this.stopped) {
      const batch = this.arrivals;
      this.arrivals = [];
      this.arrivedBytes = 0;
      try {
        await this.write(batch);
      } catch (error) {
        console.error(`${this.what} could not write; retrying in a second:`, String(error));
        this.arrivals = [...batch, ...this.arrivals];
        this.arrivedBytes = this.arrivals.reduce((sum, message) => sum + message.data.length, 0);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }
}
