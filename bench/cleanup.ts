/**
 * Stopping what the bench started (nats-server, the service, its own child processes) when a phase ends, on
 * an error, and on Ctrl-C or SIGTERM. The reaper (tests/support/reaper.ts) still kills what is left on exit.
 */
const running = new Set<() => Promise<void>>();

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, async () => {
    console.error(`\n${signal}: stopping the bench's processes`);
    await Promise.allSettled([...running].map((stop) => stop()));
    process.exit(130);
  });
}

/** Runs `use` on what `start` starts, then stops it once, whether `use` ends, throws or the bench is interrupted. */
export async function using<R, T>(start: () => Promise<R> | R, stop: (resource: R) => Promise<void>, use: (resource: R) => Promise<T>): Promise<T> {
  const resource = await start();
  let stopping: Promise<void> | undefined;
  const stopOnce = () => (stopping ??= stop(resource));
  running.add(stopOnce);
  try {
    return await use(resource);
  } finally {
    await stopOnce();
    running.delete(stopOnce);
  }
}
