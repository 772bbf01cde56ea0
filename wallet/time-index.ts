import type { AbstractBatchOperation } from 'abstract-level';
import { pad } from '../projection/time-pages.js';
import type { JsonLevel } from '../storage/level.js';

type Operation = AbstractBatchOperation<JsonLevel, string, unknown>;

/**
 * Entries of a read model in time order (`<time>!<id>`), each found again by its id to be taken out: two sublevels
 * written in the caller's batch. What a batch adds is known to that batch before it is written.
 */
export class TimeIndex<V> {
  private readonly byTime;
  /** `<id>` → its key in `byTime`. */
  private readonly keys;

  constructor(
    private readonly level: JsonLevel,
    name: string,
  ) {
    this.byTime = level.sublevel<string, V>(name, { valueEncoding: 'json' });
    this.keys = level.sublevel<string, string>(`${name}-keys`, { valueEncoding: 'utf8' });
  }

  /** A batch's changes: `put`, `remove` and `move` push operations for it, and see what it put before. */
  batch(operations: Operation[]) {
    const added = new Map<string, string>();
    const put = (id: string, at: number, value: V) => {
      const key = `${pad(at)}!${id}`;
      added.set(id, key);
      operations.push({ type: 'put', key, value, sublevel: this.byTime }, { type: 'put', key: id, value: key, sublevel: this.keys });
    };
    const remove = async (id: string) => {
      const key = added.get(id) ?? (await this.keys.get(id));
      if (key) operations.push({ type: 'del', key, sublevel: this.byTime }, { type: 'del', key: id, sublevel: this.keys });
    };
    return {
      put,
      remove,
      /** Puts the entry of `id` at another time (its earlier one out). */
      move: async (id: string, at: number, value: V) => {
        await remove(id);
        put(id, at, value);
      },
    };
  }

  /** Entries at or before `time`, oldest first. */
  async until(time: number, limit: number): Promise<V[]> {
    const found: V[] = [];
    for await (const value of this.byTime.values({ lte: `${pad(time)}!~`, limit })) found.push(value);
    return found;
  }

  /** Takes one entry out now (outside any batch). */
  async remove(id: string): Promise<void> {
    const operations: Operation[] = [];
    await this.batch(operations).remove(id);
    await this.level.batch(operations);
  }

  async clear(): Promise<void> {
    await this.byTime.clear();
    await this.keys.clear();
  }
}
