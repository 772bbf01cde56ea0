import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, RetentionPolicy, StorageType } from '@nats-io/jetstream';
import { cursorOf, seqOfCursor } from '../stream/pull.js';
import type { Stack } from '../tests/support/stack.js';
import type { LoadGenerator } from './load-generator.js';
import { stackProcesses, type Processes } from './processes.js';
import { failureLines, perSecond, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed } from './stats.js';

const RAW_STREAM = 'BENCH_RAW';
const RAW_IN_FLIGHT = 64;
const PULL_LIMIT = 50;

/**
 * The Agent Stream: `settings.events` events published through the service beside raw JetStream publishes
 * of the same size on the same nats-server (the floor: the service checks, signs nothing, stores and
 * projects each one), then pulls of 50 events from the start and from the end of what is stored.
 */
export async function streamPhase(load: LoadGenerator, stack: Stack, clients: Processes): Promise<void> {
  const { events: count, concurrency } = settings;
  console.log(`\nagent stream: ${count} pre-signed public events published, ${concurrency} in flight`);
  const raw = await rawPublishRate(stack.natsUrl, count, 450);
  const { measured, cpu } = await load.timed({ kind: 'events', url: stack.url, count, concurrency }, { ...clients, ...stackProcesses(stack) });
  const published = perSecond(measured);
  print([
    `events published  ${fixed(published)} /s (signing excluded)`,
    ...routeLines(measured),
    'CPU during the publishing',
    ...cpu.map((line) => `  ${line}`),
    ...failureLines('failures', measured),
    `raw JetStream publish of 450-byte messages on the same nats-server, ${RAW_IN_FLIGHT} in flight: ${fixed(raw)} /s`,
    `events published ÷ raw publishes  ${fixed(published / raw, 3)}`,
  ]);
  const latest = (await stack.client.pull({ start: 'latest' })).body.nextCursor as string;
  const last = seqOfCursor(latest)!;
  for (const [where, after] of [['the start', Math.max(0, last - count)], ['the end', Math.max(0, last - PULL_LIMIT)]] as const) {
    const body = JSON.stringify({ cursor: cursorOf(after), limit: PULL_LIMIT });
    const job = { kind: 'reads' as const, url: stack.url, route: 'POST /v0/pull', paths: ['/v0/pull'], bodies: [body], concurrency: settings.readConcurrency };
    await load.run({ ...job, seconds: 1 });
    const pulls = await load.timed({ ...job, seconds: settings.readSeconds }, { ...clients, ...stackProcesses(stack) });
    print([
      `pulls of ${PULL_LIMIT} from ${where} of ${count} stored events: ${fixed(perSecond(pulls.measured))} /s = ${fixed(perSecond(pulls.measured) * PULL_LIMIT)} events pulled/s`,
      ...routeLines(pulls.measured).map((line) => `  ${line}`),
      ...failureLines('  failures', pulls.measured),
    ]);
  }
}

/** Messages of `bytes` published to a scratch stream, RAW_IN_FLIGHT awaited at a time: JetStream's own rate here. */
async function rawPublishRate(url: string, count: number, bytes: number): Promise<number> {
  const nc = await connect({ servers: url });
  try {
    const jsm = await jetstreamManager(nc);
    await jsm.streams.add({ name: RAW_STREAM, subjects: ['bench.raw'], retention: RetentionPolicy.Limits, storage: StorageType.File });
    const js = jetstream(nc);
    const data = new Uint8Array(bytes).fill(120);
    let next = 0;
    const start = performance.now();
    await Promise.all(Array.from({ length: RAW_IN_FLIGHT }, async () => {
      while (next++ < count) await js.publish('bench.raw', data);
    }));
    const rate = count / ((performance.now() - start) / 1000);
    await jsm.streams.delete(RAW_STREAM);
    return rate;
  } finally {
    await nc.close();
  }
}
