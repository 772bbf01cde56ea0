
export type Put = { type: 'put'; key: string; value: unknown };
export type Del = { type: 'del'; key: string };
export type Operation = Put | Del;

/** A LevelDB or a sublevel of one. */
interface Batchable {
  batch(operations: Operation[]): Promise<void>;
}

interface Pending {
  operations: Operation[];
  resolve: () => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit for one LevelDB: writes queued while a batch is in flight go out together in the next
 * batch, in the order they were queued. Each caller's promise settles when its own operations are on disk.
 * (Two concurrent `batch` calls may land in either order; this keeps them in order.)
 */
export class BatchWriter {
  private queue: Pending[] = [];
  private draining = false;

  constructor(private readonly db: Batchable) {}

  write(operations: Operation[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.queue.push({ operations, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  private async drain(): Promise<void> {
    this.draining = true;
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      try {
        await this.db.batch(batch.flatMap((p) => p.operations));
        for (const pending of batch) pending.resolve();
      } catch (error) {
        for (const pending of batch) pending.reject(error);
      }
    }
    this.draining = false;
  }
}
