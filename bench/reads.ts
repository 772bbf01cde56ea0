import type { Stack } from '../tests/support/stack.js';
import { using } from './cleanup.js';
import { startBareServer } from './children.js';
import type { Measured } from './jobs.js';
import type { LoadGenerator } from './load-generator.js';
import { addedCpu, SERVICE_PROCESS, stackProcesses, type CpuUse, type Processes } from './processes.js';
import { answered, cpuLines, failureLines, perSecond, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed } from './stats.js';

const WARMUP_SECONDS = 1;
/** Each server is measured this many times, in turn with the other: a slow moment of the machine falls on both. */
const ROUNDS = 3;

/** `GET /pacts/:id` over the given pacts, beside a bare Fastify server (see `besideBare`). */
export async function reads(load: LoadGenerator, stack: Stack, clients: Processes, ids: string[]): Promise<void> {
  if (ids.length === 0) return console.log('\nreads: skipped, no settled pacts to read');
  await besideBare(load, stack, clients, { route: 'GET /pacts/:id', paths: ids.map((id) => `/pacts/${id}`), over: `${ids.length} pacts` });
}

interface Read {
  route: string;
  paths: string[];
}

/** One server and what each of its rounds of reads measured. */
interface Side {
  url: string;
  processes: Processes;
  /** Which of `processes` answers the reads. */
  server: string;
  rounds: { measured: Measured; cpu: CpuUse }[];
}

/**
 * GETs `paths` round-robin on the service, then the same requests against a bare Fastify server answering
 * the bytes of the first path's answer, ROUNDS times each, in turn: how far the service's read path is from the
 * HTTP floor.
 */
export async function besideBare(load: LoadGenerator, stack: Stack, clients: Processes, read: Read & { over: string }): Promise<void> {
  const { readSeconds, readConcurrency } = settings;
  const body = await (await fetch(`${stack.url}${read.paths[0]}`)).text();
  console.log(
    `\nreads: ${read.route} over ${read.over}, ${readConcurrency} in flight on keep-alive connections; ` +
      `${ROUNDS} rounds of ${readSeconds} s on the service and on a bare Fastify server in turn, each after ${WARMUP_SECONDS} s untimed`,
  );
  await using(
    () => startBareServer(body),
    (server) => server.stop(),
    async (bare) => {
      const service: Side = { url: stack.url, processes: { ...clients, ...stackProcesses(stack) }, server: SERVICE_PROCESS, rounds: [] };
      const yardstick: Side = { url: bare.url, processes: { ...clients, 'bare Fastify': bare.pid }, server: 'bare Fastify', rounds: [] };
      for (let round = 0; round < ROUNDS; round++) {
        // alternating which goes first also spreads a steady drift of the machine's speed over both
        for (const side of round % 2 === 0 ? [service, yardstick] : [yardstick, service]) await readRound(load, side, read);
      }
      print([
        ...sideLines(SERVICE_PROCESS, service),
        ...sideLines(`bare Fastify (one route answering the same ${Buffer.byteLength(body)} bytes)`, yardstick),
        `service ÷ bare  ${fixed(rateOf(service) / rateOf(yardstick), 3)} (all rounds; round by round ${roundRates(service).map((rate, i) => fixed(rate / roundRates(yardstick)[i]!, 3)).join(', ')})`,
        cpuPerRequestLine(service, yardstick),
      ]);
    },
  );
}

async function readRound(load: LoadGenerator, side: Side, read: Read): Promise<void> {
  const job = { kind: 'reads', url: side.url, route: read.route, paths: read.paths, concurrency: settings.readConcurrency } as const;
  await load.run({ ...job, seconds: WARMUP_SECONDS });
  side.rounds.push(await load.timed({ ...job, seconds: settings.readSeconds }, side.processes));
}

/** With the load generator at a full core, the rates say more about it than about the servers; what each server spends on a request does not. */
function cpuPerRequestLine(service: Side, bare: Side): string {
  const [serviceUs, bareUs] = [cpuPerRequest(service), cpuPerRequest(bare)];
  return `server CPU per request: service ${fixed(serviceUs, 1)} µs, bare ${fixed(bareUs, 1)} µs; bare ÷ service ${fixed(bareUs / serviceUs, 3)}`;
}

/** Microseconds of CPU the side's server spent per request answered, over all its rounds. */
function cpuPerRequest(side: Side): number {
  const secondsOf = (cpu: CpuUse) => {
    const seconds = cpu.seconds.get(side.server);
    if (seconds === undefined) throw new Error(`no CPU time was read for ${side.server}`);
    return seconds;
  };
  return (side.rounds.reduce((sum, { cpu }) => sum + secondsOf(cpu), 0) * 1e6) / answered(allMeasured(side));
}

const roundRates = (side: Side) => side.rounds.map(({ measured }) => perSecond(measured));
const allMeasured = (side: Side) => side.rounds.map(({ measured }) => measured).reduce(addedMeasured);
const rateOf = (side: Side) => perSecond(allMeasured(side));

function sideLines(name: string, side: Side): string[] {
  const measured = allMeasured(side);
  const cpu = side.rounds.map((round) => round.cpu).reduce(addedCpu);
  return [
    `${name}  ${fixed(perSecond(measured))} requests/s (rounds: ${roundRates(side).map((rate) => fixed(rate)).join(', ')})`,
    ...[...routeLines(measured), 'CPU', ...cpuLines(cpu).map((line) => `  ${line}`), ...failureLines('failures', measured)].map((line) => `  ${line}`),
  ];
}

function addedMeasured(a: Measured, b: Measured): Measured {
  const byRoute = { ...a.byRoute };
  for (const [route, ms] of Object.entries(b.byRoute)) byRoute[route] = (byRoute[route] ?? []).concat(ms);
  const failures = new Map(a.failures);
  for (const [why, n] of b.failures) failures.set(why, (failures.get(why) ?? 0) + n);
  return { wallMs: a.wallMs + b.wallMs, byRoute, failures: [...failures], ids: [...a.ids, ...b.ids] };
}
