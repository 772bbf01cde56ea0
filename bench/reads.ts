import type { Stack } from '../tests/support/stack.js';
import { using } from './cleanup.js';
import { startBareServer } from './children.js';
import type { LoadGenerator } from './load-generator.js';
import { stackProcesses, type Processes } from './processes.js';
import { failureLines, perSecond, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed } from './stats.js';

const WARMUP_SECONDS = 1;

/**
 * `GET /pacts/:id` over the given pacts, and the same requests against a bare Fastify server answering the
 * bytes of one of those reads: how far the service's read path is from the HTTP floor.
 */
export async function reads(load: LoadGenerator, stack: Stack, clients: Processes, ids: string[]): Promise<void> {
  const { readSeconds, readConcurrency } = settings;
  if (ids.length === 0) return console.log('\nreads: skipped, no settled pacts to read');
  const paths = ids.map((id) => `/pacts/${id}`);
  const body = await (await fetch(`${stack.url}${paths[0]}`)).text();
  console.log(`\nreads: GET /pacts/:id over ${ids.length} pacts, ${readConcurrency} in flight on keep-alive connections, ${readSeconds} s each after ${WARMUP_SECONDS} s untimed`);

  const service = await readRate(load, stack.url, paths, { ...clients, ...stackProcesses(stack) });
  const bare = await using(
    () => startBareServer(body),
    (server) => server.stop(),
    (server) => readRate(load, server.url, paths, { ...clients, 'bare Fastify': server.pid }),
  );
  print([
    `pact service   ${fixed(service.rate)} requests/s`,
    ...service.lines,
    `bare Fastify   ${fixed(bare.rate)} requests/s (one route answering the same ${Buffer.byteLength(body)} bytes)`,
    ...bare.lines,
    `service ÷ bare  ${fixed(service.rate / bare.rate, 3)}`,
  ]);
}

async function readRate(load: LoadGenerator, url: string, paths: string[], processes: Processes): Promise<{ rate: number; lines: string[] }> {
  const job = { kind: 'reads', url, paths, concurrency: settings.readConcurrency } as const;
  await load.run({ ...job, seconds: WARMUP_SECONDS });
  const { measured, cpu } = await load.timed({ ...job, seconds: settings.readSeconds }, processes);
  return { rate: perSecond(measured), lines: [...routeLines(measured), 'CPU', ...cpu.map((line) => `  ${line}`), ...failureLines('failures', measured)].map((line) => `  ${line}`) };
}
