import { execFileSync } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { JOURNAL_STREAM } from '../actors/subjects.js';
import type { Stack } from '../tests/support/stack.js';
import { withJetStream } from './jetstream.js';
import type { LoadGenerator } from './load-generator.js';
import { idleWaitText, resetPeakRss, rssMiB, stackProcesses, statusMiB, untilIdle, type Processes } from './processes.js';
import { cpuLines, failureLines, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed } from './stats.js';

/** What the stack for this phase is started with: actors idle for a second are passivated at the next sweep (every 10 s). */
export const PASSIVATING_ENV = { PACT_ACTOR_IDLE_MS: '1000' };
const PASSIVATION_TIMEOUT_MS = 60_000;

/**
 * Memory with many stored pacts, then cold activation: a command to pacts whose actors were passivated,
 * which must load the pact before it can decide and append to the journal. `stack` runs with PASSIVATING_ENV.
 */
export async function storedPacts(load: LoadGenerator, stack: Stack, clients: Processes): Promise<void> {
  const { stored, concurrency, cold } = settings;
  console.log(`\nstored pacts: a fresh service (PACT_ACTOR_IDLE_MS=1000), ${stored} pre-signed creates, ${concurrency} in flight`);
  const { measured, cpu } = await load.timed({ kind: 'creates', url: stack.url, count: stored, concurrency }, { ...clients, ...stackProcesses(stack) });
  print([
    `created ${measured.ids.length} of ${stored} in ${fixed(measured.wallMs / 1000, 2)} s = ${fixed(measured.ids.length / (measured.wallMs / 1000))} creates/s (signing excluded)`,
    ...routeLines(measured),
    'CPU during the creates (the load generator signing between batches included)',
    ...cpuLines(cpu).map((line) => `  ${line}`),
    ...failureLines('failures', measured),
    `memory after the creates  ${memory(stack)}, live actors ${await liveActors(stack)}`,
  ]);

  const waitStart = performance.now();
  const live = await passivated(stack);
  print([`memory after passivation  ${memory(stack)}, live actors ${live} (${fixed((performance.now() - waitStart) / 1000)} s after the creates)`]);
  // A pact untouched for days is activated on a service at rest, not during the compactions a bulk load leaves.
  const rest = await untilIdle(stackProcesses(stack), { windowMs: 2_000, maxSeconds: 180 });
  print([`${rest.idle ? 'settled' : 'NOT settled'} (service and nats-server; LevelDB compactions done): ${idleWaitText(rest)}, ${memory(stack)}`]);
  const peakReset = resetPeakRss(stack.serverPid!);

  const pageCache = settings.coldDropCaches ? `; ${await dropPageCache()}` : '';

  console.log(`\ncold activation: ${cold} random stored pacts, one at a time: the seller's fund (X-PAYMENT) on the passivated pact, then the buyer's on the live one${pageCache}`);
  const activations = await load.run({ kind: 'cold', url: stack.url, count: cold });
  print([
    ...routeLines(activations),
    `${await activationLine(stack)}${pageCache}`,
    ...failureLines('failures', activations),
    `live actors after: ${await liveActors(stack)}; memory ${memory(stack, peakReset ? 'peak during the cold activations' : undefined)}`,
  ]);
  print([await journalSize(stack)]);
}

/**
 * Empties the kernel's page cache, as for pacts untouched for long: a record not in LevelDB's own caches
 * or in the pages of the tables it holds mapped (those stay) is read from the disk, or from a virtual
 * machine's host's cache of it. Needs root; says what it did.
 */
async function dropPageCache(): Promise<string> {
  try {
    execFileSync('sync', { timeout: 60_000 });
    await writeFile('/proc/sys/vm/drop_caches', '3');
    return 'the page cache dropped first (BENCH_COLD_DROP_CACHES=1)';
  } catch (error) {
    return `the page cache NOT dropped (BENCH_COLD_DROP_CACHES=1): ${String(error)}`;
  }
}

/** The journal's entries and bytes: what nats-server keeps in blocks of up to 8 MiB (`npm run bench:cold-blocks`). */
function journalSize(stack: Stack): Promise<string> {
  return withJetStream(stack.natsUrl, async (_js, jsm) => {
    const { messages, bytes } = (await jsm.streams.info(JOURNAL_STREAM)).state;
    return `the journal: ${messages} entries, ${fixed(bytes / 2 ** 20)} MiB (a mean ${fixed(bytes / messages, 0)} bytes)`;
  });
}

/** The service's RSS now, its parts, and its highest since it started (or since `peak` says); nats-server's. */
function memory(stack: Stack, peak = 'peak since the service started'): string {
  const service = statusMiB(stack.serverPid!);
  const parts = `of which anonymous ${fixed(service.RssAnon)}, mapped files ${fixed(service.RssFile)}; ${peak} ${fixed(service.VmHWM)}`;
  return `RSS pact service ${fixed(service.VmRSS)} MiB (${parts}), nats-server ${fixed(rssMiB(stack.natsPid!))} MiB`;
}

/** What `/health` says of the service's actors (docs/API.md). */
interface ActorsHealth {
  live: number;
  activations: { last: number; p50Ms: number | null; p99Ms: number | null };
}

const actorsHealth = async (stack: Stack): Promise<ActorsHealth> =>
  (await stack.client.request<{ actors: ActorsHealth }>('GET', '/health')).body.actors;

const liveActors = async (stack: Stack): Promise<number> => (await actorsHealth(stack)).live;

/** The activations alone, as the service timed them: from the actor asked for to the actor loaded from its record. */
async function activationLine(stack: Stack): Promise<string> {
  const { last, p50Ms, p99Ms } = (await actorsHealth(stack)).activations;
  return `activation alone (the service's own timing of its last ${last} actors loaded from a record, /health) p50 ${p50Ms} ms, p99 ${p99Ms} ms`;
}

/** Waits until the host has passivated every actor (or the timeout) and returns the live actors left. */
async function passivated(stack: Stack): Promise<number> {
  const deadline = Date.now() + PASSIVATION_TIMEOUT_MS;
  for (;;) {
    const live = await liveActors(stack);
    if (live === 0 || Date.now() > deadline) return live;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
