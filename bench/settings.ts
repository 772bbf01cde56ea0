/** What the environment changes in a run of the bench (README, Benchmark). */
export function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
}

/** A switch in the environment: 1 on, 0 or unset off. */
function envFlag(name: string): boolean {
  const value = envInt(name, 0);
  if (value > 1) throw new Error(`${name} must be 0 or 1`);
  return value === 1;
}

export const settings = {
  /** Lifecycles in the timed phase. */
  lifecycles: envInt('BENCH_PACTS', 1000),
  /**
   * Lifecycles before the timed phase, untimed: the service's steady state is what is measured, and V8 is
   * still compiling its hot functions (on its own threads, taking the cores' time) through the first
   * thousands of calls.
   */
  warmup: envInt('BENCH_WARMUP', 1500),
  /** Lifecycles (and creates) in flight. */
  concurrency: envInt('BENCH_CONCURRENCY', 32),
  readSeconds: envInt('BENCH_READ_SECONDS', 5),
  readConcurrency: envInt('BENCH_READ_CONCURRENCY', 64),
  /** Pacts created for the memory and cold-activation phase. */
  stored: envInt('BENCH_STORED', 2000),
  /** Agent Stream events published for the stream phase. */
  events: envInt('BENCH_EVENTS', 10_000),
  /** Events the stream is then filled to over NATS, for pulls from a long stream (0: not done). */
  streamStored: envInt('BENCH_STREAM_STORED', 0),
  /** Phases to run, of commands, stored, offers, stream, rails, wallet (BENCH_PHASES, comma-separated; all by default). */
  phases: new Set((process.env.BENCH_PHASES || 'commands,stored,offers,stream,rails,wallet').split(',')),
  /** Reserve + settle pairs at the wallet service, at one wallet and then across 50. */
  reservations: envInt('BENCH_RESERVATIONS', 1000),
  /** Trades on each real rail (x402, mpp) for the collect and payout latencies. */
  railPacts: envInt('BENCH_RAIL_PACTS', 30),
  /** Offers published for the offer search phase. */
  offers: envInt('BENCH_OFFERS', 2000),
  /** Passivated pacts the cold-activation phase sends a command to. */
  cold: envInt('BENCH_COLD', 500),
  /** BENCH_COLD_DROP_CACHES=1: the kernel's page cache is emptied before the cold activations (needs root). */
  coldDropCaches: envFlag('BENCH_COLD_DROP_CACHES'),
  /** BENCH_PIN=1: the load generator and the servers on cores of their own (bench/pinning.ts). */
  pin: envFlag('BENCH_PIN'),
  /** Node arguments for the service, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`. */
  nodeArgs: (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean),
};
