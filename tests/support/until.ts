import * as assert from 'uvu/assert';

/** Waits until `condition` holds, looking every `everyMs`; fails the test with `what` after `timeoutMs`. */
export async function until(condition: () => boolean, what: string, timeoutMs = 15_000, everyMs = 100): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.unreachable(what);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
