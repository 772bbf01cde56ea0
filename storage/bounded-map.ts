/**
 * A Map that holds at most `limit` entries: setting one more forgets the one set longest ago. For
 * in-memory copies of what is on disk, where forgetting costs a read, never a wrong answer.
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly limit: number) {
    super();
  }

  override set(key: K, value: V): this {
    this.delete(key); // set again: now the newest
    super.set(key, value);
    if (this.size > this.limit) this.delete(this.keys().next().value as K);
    return this;
  }

  /** The value of `key`, which is then the newest: a cache read this way keeps what is used and forgets what is not. */
  use(key: K): V | undefined {
    const value = super.get(key);
    if (value !== undefined) this.set(key, value);
    return value;
  }
}
