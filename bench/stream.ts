import { RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { EVENT_STREAM, EVENT_SUBJECT } from '../actors/subjects.js';
import { cursorOf, seqOfCursor } from '../stream/pull.js';
import type { Stack } from '../tests/support/stack.js';
import { withJetStream } from './jetstream.js';
import type { LoadGenerator } from './load-generator.js';
import { childNamed, cpuUsedDuring, SERVICE_PROCESS, stackProcesses, untilIdle, type CpuUse, type Processes } from './processes.js';
import { answered, cpuLines, cpuPerRequestLines, failureLines, MACHINE_CORES, perSecond, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed, percentile } from './stats.js';
import { benchEvent, EVENTS_PER_PUBLISHER } from './worker/events.js';
import { newSigner } from './worker/presign.js';

const RAW_STREAM = 'BENCH_RAW';
const RAW_IN_FLIGHT = 64;
/** Raw publishes measured at least: CPU is read from /proc in 10 ms ticks, 1 µs a publish at 10,000. */
const RAW_AT_LEAST = 10_000;
const PULL_LIMIT = 50;
/** Rounds of the long stream's pulls alternated with a short one's, each store first in every other round. */
const ALTERNATED_ROUNDS = 6;

/** Starts a fresh stack of the phase's kind for `use`, stopped after it. */
export type StackStarter = (use: (stack: Stack) => Promise<void>) => Promise<void>;
const WHERES = ['the start', 'the end'] as const;
type Where = (typeof WHERES)[number];

/**
 * The Agent Stream: `settings.events` events published through the service beside raw JetStream publishes
 * of the same size on the same nats-server (the floor: the service checks, signs nothing, stores and
 * projects each one), then pulls of 50 events from the start and from the end of what is stored. With
 * `settings.streamStored`, the stream is then filled to that many events straight over NATS (each still
 * checked by the service's event projector) and the same pulls are measured again, then alternated round by
 * round with pulls from a second stack (`startShort`) filled the same way to `settings.events`: the first
 * pulls run in the service's first minute, and their cost moved between runs by more than the difference
 * the issue asks about.
 */
export async function streamPhase(load: LoadGenerator, stack: Stack, clients: Processes, startShort: StackStarter): Promise<void> {
  const { events: count, concurrency } = settings;
  console.log(`\nagent stream: ${count} pre-signed public events published, ${concurrency} in flight`);
  await untilIdle(stackProcesses(stack), SERVICE_PROCESS); // its start's work would count against raw
  const raw = await rawPublishes(stack.natsUrl, Math.max(count, RAW_AT_LEAST), 450);
  const { measured, cpu } = await load.timed({ kind: 'events', url: stack.url, count, concurrency }, { ...clients, ...stackProcesses(stack) });
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
    console.log(`\n  stream filled to ${settings.streamStored} events over NATS and projected by the service in ${fixed((performance.now() - started) / 1000)} s`);
    const waited = await untilIdle(stackProcesses(stack), SERVICE_PROCESS);
    console.log(`  the service idle (under 5% of a core: LevelDB's compactions of the fill done) after ${fixed(waited)} s more`);
    await pullRates(load, stack, clients);
    await startShort(async (short) => {
      await fillStream(short, count);
      await untilIdle(stackProcesses(short), SERVICE_PROCESS);
      await alternatedPulls(load, { short, long: stack }, clients);
    });
  }
}

/** Pulls of PULL_LIMIT events from the start and from the end of what the service stores. */
async function pullRates(load: LoadGenerator, stack: Stack, clients: Processes): Promise<void> {
  for (const where of WHERES) print(pullLines(await pulls(load, stack, clients, where)));
}

/**
 * The pulls of `pullRates` from both stores, ALTERNATED_ROUNDS times, the store pulled first changing every
 * round; then the long store's rate and CPU per pull against the short one's, over all rounds.
 */
async function alternatedPulls(load: LoadGenerator, stores: { short: Stack; long: Stack }, clients: Processes): Promise<void> {
  console.log(`\n  pulls from ${settings.events} events (a second service, its stream filled the same way) alternated with pulls from ${settings.streamStored}, ${ALTERNATED_ROUNDS} rounds`);
  const measured: { store: 'short' | 'long'; pulls: Pulls }[] = [];
  for (let round = 1; round <= ALTERNATED_ROUNDS; round++) {
    const order = round % 2 === 1 ? (['short', 'long'] as const) : (['long', 'short'] as const);
    for (const where of WHERES) {
      for (const store of order) {
        const pulled = await pulls(load, stores[store], clients, where);
        print(pullLines(pulled).map((line, i) => (i === 0 ? `round ${round}: ${line}` : `  ${line}`)), '    ');
        measured.push({ store, pulls: pulled });
      }
    }
  }
  for (const where of WHERES) {
    const of = (store: 'short' | 'long') => measured.filter((m) => m.store === store && m.pulls.where === where).map((m) => m.pulls);
    const [short, long] = [summed(of('short')), summed(of('long'))];
    const roundRatios = of('long').map((pulls, i) => summed([pulls]).cpuMicros / summed([of('short')[i]!]).cpuMicros);
    print([
      `from ${where}, all rounds: ${fixed(long.rate)} pulls/s from ${settings.streamStored} against ${fixed(short.rate)} from ${settings.events} (${fixed(long.rate / short.rate, 2)} of the rate); ` +
        `service CPU per pull ${fixed(long.cpuMicros, 1)} against ${fixed(short.cpuMicros, 1)} µs (${fixed(long.cpuMicros / short.cpuMicros, 2)} times)`,
      `  the CPU per pull from ${settings.streamStored} ÷ from ${settings.events}, round by round: ${roundRatios.map((r) => fixed(r, 2)).join(', ')} (median ${fixed(percentile([...roundRatios].sort((a, b) => a - b), 50), 2)})`,
    ]);
  }
}

/** The rate and the service's CPU per pull of several measures taken as one. */
function summed(measures: Pulls[]): { rate: number; cpuMicros: number } {
  const sum = (field: 'count' | 'wallMs' | 'serviceSeconds') => measures.reduce((total, m) => total + m[field], 0);
  return { rate: sum('count') / (sum('wallMs') / 1000), cpuMicros: (sum('serviceSeconds') * 1e6) / sum('count') };
}

interface Pulls {
  where: Where;
  stored: number;
  count: number;
  wallMs: number;
  serviceSeconds: number;
  lines: string[];
}

/** Pulls of PULL_LIMIT events from `where` in what `stack` stores: one untimed second, then settings.readSeconds timed. */
async function pulls(load: LoadGenerator, stack: Stack, clients: Processes, where: Where): Promise<Pulls> {
  const stored = await storedThrough(stack);
  const after = where === 'the start' ? 0 : Math.max(0, stored - PULL_LIMIT);
  const body = JSON.stringify({ cursor: cursorOf(after), limit: PULL_LIMIT });
  const job = { kind: 'reads' as const, url: stack.url, route: 'POST /v0/pull', paths: ['/v0/pull'], bodies: [body], concurrency: settings.readConcurrency };
  await load.run({ ...job, seconds: 1 });
  const { measured, cpu } = await load.timed({ ...job, seconds: settings.readSeconds }, { ...clients, ...stackProcesses(stack) });
  const lines = [...routeLines(measured), ...failureLines('failures', measured)];
  return { where, stored, count: answered(measured), wallMs: measured.wallMs, serviceSeconds: cpu.seconds.get(SERVICE_PROCESS)!, lines };
}

function pullLines({ where, stored, count, wallMs, serviceSeconds, lines }: Pulls): string[] {
  const rate = count / (wallMs / 1000);
  return [
    `pulls of ${PULL_LIMIT} from ${where} of ${stored} stored events: ${fixed(rate)} /s = ${fixed(rate * PULL_LIMIT)} events pulled/s`,
    ...lines.map((line) => `  ${line}`),
    `  service CPU per pull ${fixed((serviceSeconds * 1e6) / count, 1)} µs`,
  ];
}

/** The stream position the service's store has read to (a `latest` pull's cursor). */
async function storedThrough(stack: Stack): Promise<number> {
  return seqOfCursor((await stack.client.pull({ start: 'latest' })).body.nextCursor as string)!;
}

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
    const target = (await jsm.streams.info(EVENT_STREAM)).state.last_seq;
    while ((await storedThrough(stack)) < target) await new Promise((resolve) => setTimeout(resolve, 500));
  });
}

/**
 * Messages of `bytes` published to a scratch stream, RAW_IN_FLIGHT awaited at a time: JetStream's own rate
 * here, and the CPU the bench (publishing) and nats-server spent on it.
 */
async function rawPublishes(url: string, count: number, bytes: number): Promise<{ count: number; rate: number; cpu: CpuUse }> {
  return withJetStream(url, async (js, jsm) => {
    await jsm.streams.add({ name: RAW_STREAM, subjects: ['bench.raw'], retention: RetentionPolicy.Limits, storage: StorageType.File });
    const data = new Uint8Array(bytes).fill(120);
    let next = 0;
    const { cpu } = await cpuUsedDuring({ bench: process.pid, 'nats-server': childNamed('nats-server') }, () =>
      Promise.all(Array.from({ length: RAW_IN_FLIGHT }, async () => {
        while (next++ < count) await js.publish('bench.raw', data);
      })),
    );
    await jsm.streams.delete(RAW_STREAM);
    return { count, rate: count / (cpu.wallMs / 1000), cpu };
  });
}
