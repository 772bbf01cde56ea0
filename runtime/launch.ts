/**
 * How the service process starts: `npm start` (package.json) runs `START_SCRIPT`, and the tests and the
 * benchmark start it the same way (tests/support/stack.ts); tests/runtime/launch.test.ts keeps them equal.
 *
 * The flags hold the memory budget (docs/ARCHITECTURE.md): the young generation's size trades the time the
 * main thread spends in scavenges against the RSS its two semi-spaces hold (8 MiB each: docs/ARCHITECTURE.md
 * gives the figures of 4, 8 and 16), the old generation is bounded so that it is collected before it grows
 * far past what is live, and glibc keeps two malloc arenas instead of one per thread (LevelDB and libuv
 * threads otherwise each fragment their own).
 */
export const SERVICE_NODE_ARGS = ['--max-semi-space-size=8', '--max-old-space-size=192'];
export const SERVICE_ENV = { MALLOC_ARENA_MAX: '2' };

const envPrefix = Object.entries(SERVICE_ENV).map(([name, value]) => `${name}=${value}`).join(' ');
export const START_SCRIPT = `${envPrefix} exec node ${SERVICE_NODE_ARGS.join(' ')} --import tsx runtime/main.ts`;
