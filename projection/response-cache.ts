/**
 * The `GET /pacts/:id` bodies of recently read pacts, as the UTF-8 bytes sent, within a byte budget. A body
 * is replaced whenever its pact's record changes, so it is never stale. Past the budget the oldest go first,
 * but one read since the last pass is passed over once more (second chance: a read only marks its body,
 * where an LRU moved it to the back, a delete and an insert per read). Bytes, encoded once when cached, not
 * text encoded again for every read: 3–6% less of a server's CPU per read in a scratch A/B of the bench's
 * load on a 3.4 KB body (docs/BENCHMARK-LOG.md, 2026-12-07 from 19:06 UTC). A command's answer, sent once,
 * stays text (`bodyOf`), which Node joins to its headers in one chunk.
 */
export class ResponseCache {
  private readonly bodies = new Map<string, { body: Buffer; read: boolean }>();
  /** What the cached bodies take: their bytes and each one's BODY_OVERHEAD_BYTES. */
  private bytes = 0;
  /** Reads that missed and are fetching the text; `changed` while one is out, what it fetched may be old. */
  private readonly misses = new Map<string, { readers: number; stale: boolean }>();

  constructor(private readonly maxBytes: number) {}

  /** The cached body, shared by every read: never to be written to. */
  get(id: string): Buffer | undefined {
    const cached = this.bodies.get(id);
    if (cached) cached.read = true;
    return cached?.body;
  }

  /**
   * The body of the text `fetch` reads (undefined: no such pact), cached unless the pact's record changed
   * while it was read.
   */
  async fill(id: string, fetch: () => Promise<string | undefined>): Promise<Buffer | undefined> {
    const miss = this.misses.get(id) ?? { readers: 0, stale: false };
    miss.readers++;
    this.misses.set(id, miss);
    try {
      const text = await fetch();
      if (text === undefined) return undefined;
      return miss.stale ? Buffer.from(bodyOf(text)) : this.add(id, text);
    } finally {
      if (--miss.readers === 0) this.misses.delete(id);
    }
  }

  private add(id: string, pactText: string): Buffer {
    this.drop(id);
    const body = bytesOf(pactText);
    const size = memoryOf(body);
    if (size > this.maxBytes) return body;
    this.makeRoom(size);
    this.bodies.set(id, { body, read: false });
    this.bytes += size;
    return body;
  }

  /** The pact's record changed: a cached body is rebuilt from its new text. */
  changed(id: string, pactText: string): void {
    const miss = this.misses.get(id);
    if (miss) miss.stale = true;
    if (this.bodies.has(id)) this.add(id, pactText);
  }

  /**
   * Evicts the oldest bodies not read since the last pass until `bytes` more fit. At most MAX_SPARED read
   * ones are passed over in one call, so that a cache full of read bodies costs no long pass.
   */
  private makeRoom(bytes: number): void {
    let spared = 0;
    for (const [oldest, old] of this.bodies) {
      if (this.bytes + bytes <= this.maxBytes) return;
      this.bodies.delete(oldest);
      if (old.read && spared++ < MAX_SPARED) {
        old.read = false;
        this.bodies.set(oldest, old); // to the back: the loop comes to it again if nothing else makes room
      } else this.bytes -= memoryOf(old.body);
    }
  }

  private drop(id: string): void {
    const old = this.bodies.get(id);
    if (!old) return;
    this.bodies.delete(id);
    this.bytes -= memoryOf(old.body);
  }
}

const MAX_SPARED = 64;

/**
 * What a cached body takes beside its bytes: its Buffer object on the heap and the bookkeeping of memory of
 * its own (about 470 bytes of RSS a body, measured with 100,000 bodies of 3,400 bytes on Node 20).
 */
export const BODY_OVERHEAD_BYTES = 512;
const memoryOf = (body: Buffer) => body.length + BODY_OVERHEAD_BYTES;

/** `{ pact }` around the pact's JSON text, never parsed. */
export const bodyOf = (pactText: string) => `{"pact":${pactText}}`;

/**
 * `bodyOf(pactText)` in UTF-8, in memory of its own: a small Buffer is otherwise a slice of a shared pool,
 * which a cached body would keep alive whole.
 */
function bytesOf(pactText: string): Buffer {
  const text = bodyOf(pactText);
  const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
  const written = bytes.write(text);
  return written === bytes.length ? bytes : Buffer.from(text); // never send memory `write` left as it was
}
