import { RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { EVENT_STREAM, EVENT_SUBJECT } from '../actors/subjects.js';
import type { Stack } from '../tests/support/stack.js';
import { withJetStream } from './jetstream.js';
import type { LoadGenerator } from './load-generator.js';
import { cpuUsedDuring, idleWaitText, SERVICE_PROCESS, stackProcesses, untilIdle, type CpuUse, type Processes } from './processes.js';
import { answered, cpuLines, cpuPerRequestLines, failureLines, MACHINE_CORES, perSecond, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed } from './stats.js';
import { alternatedPulls, pullRates, storedThrough } from './stream-pulls.js';
import { benchEvent, EVENTS_PER_PUBLISHER } from './worker/events.js';
import { newSigner } from './worker/presign.js';

const RAW_STREAM = 'BENCH_RAW';
const RAW_IN_FLIGHT = 64;
/** Raw publishes measured at least: CPU is read from /proc in 10 ms ticks, 1 µs a publish at 10,000. */
const RAW_AT_LEAST = 10_000;

/** Starts a fresh stack of the phase's kind for `use`, stopped after it. */
export type StackStarter = (use: (stack: Stack) => Promise<void>) => Promise<void>;

/**
 * The Agent Stream: `settings.events` events published through the service beside raw JetStream publishes
 * of the same size on the same nats-server (the floor: the service checks, signs nothing, stores and
 * projects each one), then pulls of 50 events from the start and from the end of what is stored. With
 * `settings.streamStored`, the stream is then filled to that many events straight over NATS (each still
 * checked by the service's event projector) and the same pulls are measured again, then alternated round by
 * round with pulls from a second stack (`startShort`) given `settings.events` events as the first was: a
 * comparison that neither store's moment (a service's first minute, a slow stretch of the VM) decides. The
 * short store's events are then still in LevelDB's memtable, the long store's oldest in its tables (its
 * newest in its memtable); the same comparison is made again after the second service is restarted (`restart`),
 * and again after the first is too: one store's LevelDB state changes at a time, until both are read from
 * tables alone.
 */
export async function streamPhase(
  load: LoadGenerator,
  stack: Stack,
  clients: Processes,
  startShort: StackStarter,
  restart: (stack: Stack) => Promise<void>,
): Promise<void> {
  const { events: count, concurrency } = settings;
  console.log(`\nagent stream: ${count} pre-signed public events published, ${concurrency} in flight`);
  await serviceIdle(stack); // its start's work would count against raw
  const raw = await rawPublishes(stack, Math.max(count, RAW_AT_LEAST), 450);
  const { measured, cpu } = await load.timed(publishJob(stack), { ...clients, ...stackProcesses(stack) });
  const published = perSecond(measured);
  print([
    `events published  ${fixed(published)} /s (signing excluded)`,
    ...routeLines(measured),
    'CPU during the publishing',
    ...cpuLines(cpu).map((line) => `  ${line}`),
    'CPU per event published',
    ...cpuPerRequestLines(cpu, answered(measured), MACHINE_CORES).map((line) => `  ${line}`),
    ...failureLines('failures', measured),
    `raw JetStream publish of ${raw.count} 450-byte messages on the same nats-server, ${RAW_IN_FLIGHT} in flight: ${fixed(raw.rate)} /s`,
    'CPU per raw publish',
    ...cpuPerRequestLines(raw.cpu, raw.count, MACHINE_CORES).map((line) => `  ${line}`),
    `events published ÷ raw publishes  ${fixed(published / raw.rate, 3)}`,
    // the goal (issue 8) as a budget, to set beside the CPU per event above
    `half of raw is ${fixed(raw.rate / 2)} events/s: at most ${fixed((2 * MACHINE_CORES * 1e6) / raw.rate, 0)} µs of the machine's CPU per event, every process's included`,
  ]);
  await pullRates(load, stack, clients);
  if (settings.streamStored > count) {
    const started = performance.now();
    await fillStream(stack, settings.streamStored);
    const seconds = (performance.now() - started) / 1000;
    console.log(`\n  stream filled to ${settings.streamStored} events over NATS and projected by the service in ${fixed(seconds)} s`);
    console.log(`  then the service ${idleWaitText(await serviceIdle(stack))} more (LevelDB's compactions of the fill done)`);
    await pullRates(load, stack, clients);
    await startShort(async (short) => {
      const published = await load.run(publishJob(short));
      if (published.failures.length > 0) throw new Error(`publishes to the second service failed: ${JSON.stringify(published.failures)}`);
      await untilStored(short);
      console.log(`\n  the second service given ${count} events, ${idleWaitText(await serviceIdle(short))}`);
      const stores = { short, long: stack };
      await alternatedPulls(load, stores, clients, "the short store's events in LevelDB's memtable, the long store's oldest in its tables");
      // A reopened LevelDB writes the memtable its log held out to a table: one store changes at a time.
      await restartedAndIdle(short, 'the second service', restart);
      await alternatedPulls(load, stores, clients, "the second service restarted: its events in a table, the long store's newest still in its memtable");
      await restartedAndIdle(stack, 'the first service', restart);
      await alternatedPulls(load, stores, clients, 'both services restarted: every event read from a LevelDB table');
    });
  }
}

/** Restarts the service of `stack` and waits until it is idle, saying how long that took. */
async function restartedAndIdle(stack: Stack, name: string, restart: (stack: Stack) => Promise<void>): Promise<void> {
  await restart(stack);
  console.log(`\n  ${name} restarted, ${idleWaitText(await serviceIdle(stack))}`);
}

/** Waits until the service of `stack` is idle (`untilIdle`). */
const serviceIdle = (stack: Stack) => untilIdle({ [SERVICE_PROCESS]: stack.serverPid! });

const publishJob = (stack: Stack) =>
  ({ kind: 'events' as const, url: stack.url, count: settings.events, concurrency: settings.concurrency });

/**
 * Appends signed events to the service's event stream over NATS, as a gateway does, until it holds `total`,
 * then waits for the service to have read them all.
 */
async function fillStream(stack: Stack, total: number): Promise<void> {
  await withJetStream(stack.natsUrl, async (js, jsm) => {
    const first = (await jsm.streams.info(EVENT_STREAM)).state.messages;
    let next = first;
    let publisher = newSigner();
    await Promise.all(Array.from({ length: RAW_IN_FLIGHT }, async () => {
      while (next < total) {
        const i = next++;
        if (i % EVENTS_PER_PUBLISHER === 0) publisher = newSigner();
        const event = benchEvent(publisher, i);
        await js.publish(EVENT_SUBJECT, JSON.stringify({ receivedAt: Date.now(), event }), { msgID: event.id });
      }
    }));
  });
  await untilStored(stack);
}

/** Waits until the service's store has read its whole stream. */
async function untilStored(stack: Stack): Promise<void> {
  const target = await withJetStream(stack.natsUrl, async (_, jsm) => (await jsm.streams.info(EVENT_STREAM)).state.last_seq);
  while ((await storedThrough(stack)) < target) await new Promise((resolve) => setTimeout(resolve, 500));
}

/**
 * Messages of `bytes` published to a scratch stream, RAW_IN_FLIGHT awaited at a time: JetStream's own rate
 * here, and the CPU the bench (publishing) and nats-server spent on it.
 */
async function rawPublishes(stack: Stack, count: number, bytes: number): Promise<{ count: number; rate: number; cpu: CpuUse }> {
  return withJetStream(stack.natsUrl, async (js, jsm) => {
    await jsm.streams.add({ name: RAW_STREAM, subjects: ['bench.raw'], retention: RetentionPolicy.Limits, storage: StorageType.File });
    const data = new Uint8Array(bytes).fill(120);
    let next = 0;
    const { cpu } = await cpuUsedDuring({ bench: process.pid, 'nats-server': stack.natsPid! }, () =>
      Promise.all(Array.from({ length: RAW_IN_FLIGHT }, async () => {
        while (next++ < count) await js.publish('bench.raw', data);
      })),
    );
    await jsm.streams.delete(RAW_STREAM);
    return { count, rate: count / (cpu.wallMs / 1000), cpu };
  });
}
