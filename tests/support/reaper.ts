/**
 * Processes the tests started: killed when the test process exits, however it exits, so that a crashed
 * test run leaves no nats-server or service behind.
 */
const pids = new Set<number>();

process.on('exit', () => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
});

export function reapOnExit(pid: number | undefined): void {
  if (pid !== undefined) pids.add(pid);
}

/** The process has ended: its pid may be reused, so it must not be killed any more. */
export function forget(pid: number | undefined): void {
  if (pid !== undefined) pids.delete(pid);
}
