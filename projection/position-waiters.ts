/** Callers waiting for a journal position to be reached (written to the read model). */
export class PositionWaiters {
  private position = 0;
  private readonly waiting: { seq: number; resolve: () => void }[] = [];

  /** The position reached so far. */
  get reachedSeq(): number {
    return this.position;
  }

  /** The read model now holds position `seq`: whoever waited for it, or for less, goes on. */
  reach(seq: number): void {
    this.position = Math.max(this.position, seq);
    for (let i = this.waiting.length - 1; i >= 0; i--) {
      const waiter = this.waiting[i]!;
      if (waiter.seq > this.position) continue;
      this.waiting.splice(i, 1);
      waiter.resolve();
    }
  }

  /**
   * Resolves once position `seq` is reached, or after `timeoutMs` when one is given: then a lagging read
   * model delays answers but never blocks them.
   */
  reached(seq: number, timeoutMs?: number): Promise<void> {
    if (seq <= this.position) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { seq, resolve: () => (clearTimeout(timer), resolve()) };
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              this.waiting.splice(this.waiting.indexOf(waiter), 1);
              resolve();
            }, timeoutMs);
      this.waiting.push(waiter);
    });
  }
}
