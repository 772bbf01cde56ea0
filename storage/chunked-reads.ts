/** What `inChunks` needs of a LevelDB iterator. */
export interface ChunkedIterator<T> {
  nextv(size: number): Promise<T[]>;
  close(): Promise<void>;
}

/**
 * The most entries asked for at once, as classic-level's own `for await` asks: LevelDB's binding makes room
 * for as many as are asked for, and a chunk often comes back short (at 16 KiB), so doubling alone would not stop.
 */
const MAX_CHUNK = 1_000;

/**
 * The entries of `iterator` in chunks: `firstChunk` (at least 1), then twice as many each time, at most
 * `largest` (at most MAX_CHUNK), until it ends; closed when done or abandoned. A reader that stops after a
 * page reads little more than its page, where `for await` on a classic-level iterator fetches one entry,
 * then a thousand. `largest` equal to `firstChunk` reads in chunks of one size.
 */
export async function* inChunks<T>(iterator: ChunkedIterator<T>, firstChunk: number, largest = MAX_CHUNK): AsyncGenerator<T[]> {
  const most = Math.min(Math.max(1, largest), MAX_CHUNK);
  try {
    for (let chunk = Math.min(Math.max(1, firstChunk), most); ; chunk = Math.min(2 * chunk, most)) {
      const entries = await iterator.nextv(chunk);
      if (entries.length === 0) return;
      yield entries;
    }
  } finally {
    await iterator.close();
  }
}
