import type { AbstractBatchOperation } from 'abstract-level';
import { BoundedMap } from '../storage/bounded-map.js';
import type { JsonLevel } from '../storage/level.js';

/** Pacts whose parties are also kept in memory. */
const IN_MEMORY = 10_000;

type Operation = AbstractBatchOperation<JsonLevel, string, string[]>;

/**
 * The parties of each pact the notifier follows, as its creation entry names them, until the pact is
 * settled or cancelled: in LevelDB, so that a notification never reads the pact's creation back from the
 * journal. For a pact untouched for a while that read makes nats-server load a whole file block, and every
 * append to the journal waits for it (`npm run bench:cold-blocks`). Changes are written in batches
 * (`write`); the parties of a batch a crash or a failed write kept from LevelDB are not here, and the caller
 * reads the journal for them (a pact ended whose removal was lost leaves its parties behind: harmless).
 */
export class NotifiedParties {
  private readonly stored;
  private readonly recent = new BoundedMap<string, string[]>(IN_MEMORY);
  private unwritten: Operation[] = [];

  constructor(level: JsonLevel) {
    this.stored = level.sublevel<string, string[]>('notified-parties', { valueEncoding: 'json' });
  }

  created(pactId: string, parties: string[]): void {
    this.recent.set(pactId, parties);
    this.unwritten.push({ type: 'put', key: pactId, value: parties });
  }

  ended(pactId: string): void {
    this.recent.delete(pactId);
    this.unwritten.push({ type: 'del', key: pactId });
  }

  /** The pact's parties; undefined when they are not kept (see above). */
  async of(pactId: string): Promise<string[] | undefined> {
    const known = this.recent.use(pactId);
    if (known) return known;
    const stored = await this.stored.get(pactId);
    if (stored) this.recent.set(pactId, stored);
    return stored;
  }

  /** Writes the changes made since the last call. Those of a write that fails are not tried again (see above). */
  async write(): Promise<void> {
    const operations = this.unwritten;
    if (operations.length === 0) return;
    this.unwritten = [];
    await this.stored.batch(operations);
  }
}
