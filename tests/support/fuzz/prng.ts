/**
 * A small seeded PRNG (sfc32) with the helpers the fuzz generators use. Everything a generator picks comes
 * from here, so one seed replays the same choices (FUZZ_SEED=<seed>).
 */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(readonly seed: number) {
    this.a = 0x9e3779b9;
    this.b = 0x243f6a88;
    this.c = 0xb7e15162;
    this.d = seed >>> 0;
    for (let i = 0; i < 15; i++) this.next();
  }

  /** A uint32. */
  next(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  /** A derived generator, so that one generator's count does not shift another's choices. */
  fork(label: string): Rng {
    let h = this.seed ^ 0x811c9dc5;
    for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
    return new Rng(h >>> 0);
  }

  float(): number {
    return this.next() / 0x1_0000_0000;
  }

  /** An integer in [min, max]. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from nothing');
    return items[this.int(0, items.length - 1)]!;
  }

  bytes(n: number): Buffer {
    const out = Buffer.alloc(n);
    for (let i = 0; i < n; i++) out[i] = this.next() & 0xff;
    return out;
  }

  hex(chars: number): string {
    return this.bytes(Math.ceil(chars / 2)).toString('hex').slice(0, chars);
  }

  /** A string of `length` characters drawn from `alphabet`. */
  string(length: number, alphabet = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'): string {
    let out = '';
    for (let i = 0; i < length; i++) out += alphabet[this.int(0, alphabet.length - 1)];
    return out;
  }
}

/** FUZZ_SEED when set (decimal or 0x hex), else a fixed default so that plain runs are reproducible. */
export function seedFromEnv(fallback = 0x5eed_2026): number {
  const raw = process.env.FUZZ_SEED;
  if (!raw) return fallback;
  const seed = Number(raw);
  if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED must be an integer, got ${raw}`);
  return seed >>> 0;
}
