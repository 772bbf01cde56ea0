/** The Agent Stream's pulls in the bench: their rate and the service's CPU per pull, from one store or two alternated. */
import { cursorOf, seqOfCursor } from '../stream/pull.js';
import type { Stack } from '../tests/support/stack.js';
import type { LoadGenerator } from './load-generator.js';
import { SERVICE_PROCESS, stackProcesses, type Processes } from './processes.js';
import { answered, failureLines, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed, median } from './stats.js';

const PULL_LIMIT = 50;
/** Rounds of the long store's pulls alternated with the short one's, each store first in every other round. */
const ALTERNATED_ROUNDS = 6;
/** Untimed seconds of pulls from each place of each store before the rounds: a fresh service still compiles. */
const WARM_UP_SECONDS = 3;

const WHERES = ['the start', 'the end'] as const;
type Where = (typeof WHERES)[number];
type Store = 'short' | 'long';

interface Pulls {
  where: Where;
  stored: number;
  count: number;
  wallMs: number;
  serviceSeconds: number;
  /** Latencies and failures, as the report prints them. */
  lines: string[];
}

/** Pulls of PULL_LIMIT events from the start and from the end of what the service stores. */
export async function pullRates(load: LoadGenerator, stack: Stack, clients: Processes): Promise<void> {
  const stored = await storedThrough(stack);
  for (const where of WHERES) print(pullLines(await pulls(load, stack, clients, where, stored)));
}

/**
 * The pulls of `pullRates` from two stores, ALTERNATED_ROUNDS times, the store pulled first changing every
 * round, after a warm-up of both; then the long store's rate and CPU per pull against the short one's, over
 * all rounds and round by round. `when` says what state the stores are in.
 */
export async function alternatedPulls(load: LoadGenerator, stores: Record<Store, Stack>, clients: Processes, when: string): Promise<void> {
  const stored: Record<Store, number> = { short: await storedThrough(stores.short), long: await storedThrough(stores.long) };
  console.log(`\n  pulls from ${stored.short} events (a second service) alternated with pulls from ${stored.long}, ${ALTERNATED_ROUNDS} rounds; ${when}`);
  for (const store of ['short', 'long'] as const) {
    for (const where of WHERES) await load.run({ ...pullJob(stores[store], where, stored[store]), seconds: WARM_UP_SECONDS });
  }
  const measured: Record<Store, Pulls[]> = { short: [], long: [] };
  for (let round = 1; round <= ALTERNATED_ROUNDS; round++) {
    const order: Store[] = round % 2 === 1 ? ['short', 'long'] : ['long', 'short'];
    for (const where of WHERES) {
      for (const store of order) {
        const pulled = await pulls(load, stores[store], clients, where, stored[store]);
        print(pullLines(pulled).map((line, i) => (i === 0 ? `round ${round}: ${line}` : `  ${line}`)), '    ');
        measured[store].push(pulled);
      }
    }
  }
  for (const where of WHERES) print(comparisonLines(where, measured, stored));
  print([startOverEndLine(measured, stored)]);
}

/**
 * Each store's CPU per pull from the start ÷ from the end, over all rounds: within one service, so what
 * sets the two services apart (one runs a little dearer than the other in a given run) is not in it.
 */
function startOverEndLine(measured: Record<Store, Pulls[]>, stored: Record<Store, number>): string {
  const ratio = (store: Store) => {
    const cpuFrom = (where: Where) => summed(pullsFrom(measured[store], where)).cpuMicros;
    return `${fixed(cpuFrom('the start') / cpuFrom('the end'), 2)} from ${stored[store]}`;
  };
  return `CPU per pull from the start ÷ from the end: ${ratio('long')}, ${ratio('short')}`;
}

/** The long store's pulls from `where` against the short one's. */
function comparisonLines(where: Where, measured: Record<Store, Pulls[]>, stored: Record<Store, number>): string[] {
  const [short, long] = [pullsFrom(measured.short, where), pullsFrom(measured.long, where)];
  const [shortAll, longAll] = [summed(short), summed(long)];
  const byRound = long.map((pulls, i) => summed([pulls]).cpuMicros / summed([short[i]!]).cpuMicros);
  const cpuRatio = longAll.cpuMicros / shortAll.cpuMicros;
  return [
    `from ${where}, all rounds: ${fixed(longAll.rate)} pulls/s from ${stored.long} against ${fixed(shortAll.rate)} from ${stored.short} ` +
      `(${fixed(longAll.rate / shortAll.rate, 2)} of the rate)`,
    `  service CPU per pull ${fixed(longAll.cpuMicros, 1)} against ${fixed(shortAll.cpuMicros, 1)} µs (${fixed(cpuRatio, 2)} times)`,
    `  round by round, the CPU per pull from ${stored.long} ÷ from ${stored.short}: ` +
      `${byRound.map((ratio) => fixed(ratio, 2)).join(', ')} (median ${fixed(median(byRound), 2)})`,
  ];
}

const pullsFrom = (measures: Pulls[], where: Where) => measures.filter((pulls) => pulls.where === where);

/** The rate and the service's CPU per pull of several measures taken as one. */
function summed(measures: Pulls[]): { rate: number; cpuMicros: number } {
  const sum = (field: 'count' | 'wallMs' | 'serviceSeconds') => measures.reduce((total, m) => total + m[field], 0);
  return { rate: sum('count') / (sum('wallMs') / 1000), cpuMicros: (sum('serviceSeconds') * 1e6) / sum('count') };
}

/** Pulls of PULL_LIMIT events from `where` in the `stored` events of `stack`: one untimed second, then settings.readSeconds timed. */
async function pulls(load: LoadGenerator, stack: Stack, clients: Processes, where: Where, stored: number): Promise<Pulls> {
  const job = pullJob(stack, where, stored);
  await load.run({ ...job, seconds: 1 });
  const { measured, cpu } = await load.timed({ ...job, seconds: settings.readSeconds }, { ...clients, ...stackProcesses(stack) });
  const lines = [...routeLines(measured), ...failureLines('failures', measured)];
  return { where, stored, count: answered(measured), wallMs: measured.wallMs, serviceSeconds: cpu.seconds.get(SERVICE_PROCESS)!, lines };
}

function pullJob(stack: Stack, where: Where, stored: number) {
  const after = where === 'the start' ? 0 : Math.max(0, stored - PULL_LIMIT);
  const body = JSON.stringify({ cursor: cursorOf(after), limit: PULL_LIMIT });
  return { kind: 'reads' as const, url: stack.url, route: 'POST /v0/pull', paths: ['/v0/pull'], bodies: [body], concurrency: settings.readConcurrency };
}

function pullLines(pulls: Pulls): string[] {
  const { rate, cpuMicros } = summed([pulls]);
  return [
    `pulls of ${PULL_LIMIT} from ${pulls.where} of ${pulls.stored} stored events: ${fixed(rate)} /s = ${fixed(rate * PULL_LIMIT)} events pulled/s`,
    ...pulls.lines.map((line) => `  ${line}`),
    `  service CPU per pull ${fixed(cpuMicros, 1)} µs`,
  ];
}

/** The stream position the service's store has read to (a `latest` pull's cursor). */
export async function storedThrough(stack: Stack): Promise<number> {
  return seqOfCursor((await stack.client.pull({ start: 'latest' })).body.nextCursor as string)!;
}
