/**
 * The `GET /pacts/:id` bodies of recently read pacts, as the text sent, within a byte budget (what the texts
 * take in memory: see `memoryOf`). A body is replaced whenever its pact's record changes, so it is never
 * stale. Past the budget the oldest go first, but one read since the last pass is passed over once more
 * (second chance: a read only marks its body, where an LRU moved it to the back, a delete and an insert per
 * read). Text, not a Buffer (`bodyOf` makes the command answers too): Node joins a string body to its
 * headers in one chunk (a Buffer stays a chunk of its own), and answers as text took about 10% less of the
 * service's CPU per signed command in `npm run bench`.
 */
export class ResponseCache {
  private readonly bodies = new Map<string, { body: string; bytes: number; read: boolean }>();
  private bytes = 0;
  /** Reads that missed and are fetching the text; `changed` while one is out, what it fetched may be old. */
  private readonly misses = new Map<string, { readers: number; stale: boolean }>();

  constructor(private readonly maxBytes: number) {}

  get(id: string): string | undefined {
    const cached = this.bodies.get(id);
    if (cached) cached.read = true;
    return cached?.body;
  }

  /**
   * The body of the text `fetch` reads (undefined: no such pact), cached unless the pact's record changed
   * while it was read.
   */
  async fill(id: string, fetch: () => Promise<string | undefined>): Promise<string | undefined> {
    const miss = this.misses.get(id) ?? { readers: 0, stale: false };
    miss.readers++;
    this.misses.set(id, miss);
    try {
      const text = await fetch();
      if (text === undefined) return undefined;
      return miss.stale ? bodyOf(text) : this.add(id, text);
    } finally {
      if (--miss.readers === 0) this.misses.delete(id);
    }
  }

  private add(id: string, pactText: string): string {
    const body = bodyOf(pactText);
    const bytes = memoryOf(body);
    this.drop(id);
    if (bytes > this.maxBytes) return body;
    this.makeRoom(bytes);
    this.bodies.set(id, { body, bytes, read: false });
    this.bytes += bytes;
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
      } else this.bytes -= old.bytes;
    }
  }

  private drop(id: string): void {
    const old = this.bodies.get(id);
    if (!old) return;
    this.bodies.delete(id);
    this.bytes -= old.bytes;
  }
}

const MAX_SPARED = 64;

/**
 * What V8 holds `text` in, at most: a byte per character when all are ASCII, else two (a string with any
 * character past U+00FF is stored two bytes a character), or its UTF-8 size if that is more.
 */
const memoryOf = (text: string) => {
  const utf8 = Buffer.byteLength(text);
  return utf8 === text.length ? utf8 : Math.max(utf8, 2 * text.length);
};

/** `{ pact }` around the pact's JSON text, never parsed. */
export const bodyOf = (pactText: string) => `{"pact":${pactText}}`;
