/**
 * Named places where a test may have the process kill itself (SIGKILL, as `kill -9` does) to prove that a
 * crash there loses and duplicates nothing. Armed only with test hooks on: PACT_TEST_HOOKS=1 and
 * PACT_TEST_CRASH_AT=<name>[,<name>…]. The names are listed where they are placed.
 */
const armed = new Set(process.env.PACT_TEST_HOOKS === '1' ? (process.env.PACT_TEST_CRASH_AT ?? '').split(',').filter(Boolean) : []);

export function crashPoint(name: string): void {
  if (armed.has(name)) process.kill(process.pid, 'SIGKILL');
}
