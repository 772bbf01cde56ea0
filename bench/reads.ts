import type { Stack } from '../tests/support/stack.js';
import { using } from './cleanup.js';
import { startBareServer } from './children.js';
import type { LoadGenerator } from './load-generator.js';
import { stackProcesses, type Processes } from './processes.js';
import { failureLines, perSecond, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed } from './stats.js';

const WARMUP_SECONDS = 1;

/** `GET /pacts/:id` over the given pacts, beside a bare Fastify server (see `besideBare`). */
export async function reads(load: LoadGenerator, stack: Stack, clients: Processes, ids: string[]): Promise<void> {
  if (ids.length === 0) return console.log('\nreads: skipped, no settled pacts to read');
  await besideBare(load, stack, clients, { route: 'GET /pacts/:id', paths: ids.map((id) => `/pacts/${id}`), over: `${ids.length} pacts` });
}

/**
 * GETs `paths` round-robin on the service, then the same requests against a bare Fastify server answering
 * the bytes of the first path's answer: how far the service's read path is from the HTTP floor.
 */
export async function besideBare(load: LoadGenerator, stack: Stack, clients: Processes, read: { route: string; paths: string[]; over: string }): Promise<void> {
  const { readSeconds, readConcurrency } = settings;
  const body = await (await fetch(`${stack.url}${read.paths[0]}`)).text();
  console.log(`\nreads: ${read.route} over ${read.over}, ${readConcurrency} in flight on keep-alive connections, ${readSeconds} s each after ${WARMUP_SECONDS} s untimed`);

  const service = await readRate(load, stack.url, read, { ...clients, ...stackProcesses(stack) });
  const bare = await using(
    () => startBareServer(body),
    (server) => server.stop(),
    (server) => readRate(load, server.url, read, { ...clients, 'bare Fastify': server.pid }),
  );
  print([
    `pact service   ${fixed(service.rate)} requests/s`,
    ...service.lines,
    `bare Fastify   ${fixed(bare.rate)} requests/s (one route answering the same ${Buffer.byteLength(body)} bytes)`,
    ...bare.lines,
    `service ÷ bare  ${fixed(service.rate / bare.rate, 3)}`,
  ]);
}

async function readRate(load: LoadGenerator, url: string, read: { route: string; paths: string[] }, processes: Processes): Promise<{ rate: number; lines: string[] }> {
  const job = { kind: 'reads', url, route: read.route, paths: read.paths, concurrency: settings.readConcurrency } as const;
  await load.run({ ...job, seconds: WARMUP_SECONDS });
  const { measured, cpu } = await load.timed({ ...job, seconds: settings.readSeconds }, processes);
  return { rate: perSecond(measured), lines: [...routeLines(measured), 'CPU', ...cpu.map((line) => `  ${line}`), ...failureLines('failures', measured)].map((line) => `  ${line}`) };
}
