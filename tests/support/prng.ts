/** mulberry32: a small seeded PRNG, so that every run checks the same cases and a failure names its seed. */
export function prng(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  /** An integer from `lo` to `hi`, both included. */
  const int = (lo: number, hi: number) => lo + Math.floor(next() * (hi - lo + 1));
  const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)]!;
  /** Each item kept with probability 0.7. */
  const subset = <T>(items: readonly T[]): T[] => items.filter(() => next() < 0.7);
  return { next, int, pick, subset };
}

export type Random = ReturnType<typeof prng>;
