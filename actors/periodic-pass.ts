/**
 * Work done in passes: at start, then every so often, never two passes at once (a run asked for while
 * one goes on joins it). A pass resolves to how much it did.
 */
export abstract class PeriodicPass {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  /** `what` names the work in the log when a pass fails. */
  constructor(private readonly what: string) {}

  start(intervalMs: number): void {
    this.timer = setInterval(() => void this.run().catch((error) => console.error(`${this.what} failed:`, error)), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  run(): Promise<number> {
    this.running ??= this.pass().finally(() => (this.running = undefined));
    return this.running;
  }

  protected abstract pass(): Promise<number>;
}
