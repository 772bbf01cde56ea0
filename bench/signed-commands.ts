import type { Pact } from '../machines/pact/types.js';
import type { Stack } from '../tests/support/stack.js';
import type { LoadGenerator } from './load-generator.js';
import { stackProcesses, type Processes } from './processes.js';
import { answered, cpuLines, cpuPerRequestLines, failureLines, MACHINE_CORES, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed, latencySummary } from './stats.js';
import { gcPauseLine, gcPauses } from './gc-pauses.js';

const PAYOUT_TIMEOUT_MS = 120_000;

/** The write path: pre-signed lifecycles from the load generator. Resolves to the ids of the settled pacts. */
export async function signedCommands(load: LoadGenerator, stack: Stack, clients: Processes, verifyRate: number): Promise<string[]> {
  const { lifecycles, warmup, concurrency } = settings;
  const job = { kind: 'lifecycles', url: stack.url, concurrency } as const;
  console.log(`\nsigned commands: pre-signed lifecycles (create, fund ×2 via 402, propose, cosign), ${concurrency} in flight`);
  const warm = await load.run({ ...job, count: warmup });
  print([`warm-up: ${warm.ids.length} of ${warmup} lifecycles settled (untimed)`, ...failureLines('warm-up failures', warm)]);

  const { measured, cpu, startedAt } = await load.timed({ ...job, count: lifecycles }, { ...clients, ...stackProcesses(stack) });
  const pauses = await gcPauses.between(startedAt, startedAt + cpu.wallMs);
  const seconds = measured.wallMs / 1000;
  const signedRate = answered(measured) / seconds;
  print([
    `pacts settled      ${measured.ids.length} of ${lifecycles} in ${fixed(seconds, 2)} s = ${fixed(measured.ids.length / seconds)} pacts/s`,
    `signed commands/s  ${fixed(signedRate)} (${answered(measured)} signed requests answered, incl. proofless fund calls)`,
    `per signed request ${latencySummary(Object.values(measured.byRoute).flat())}`,
    ...routeLines(measured).map((line) => `  ${line}`),
    `signed commands/s ÷ single-core verify/s  ${fixed(signedRate / verifyRate, 3)}`,
    `CPU in the timed phase (the machine's ${MACHINE_CORES} cores are shared by all of these and anything else running)`,
    ...cpuLines(cpu).map((line) => `  ${line}`),
    'CPU per signed request',
    ...cpuPerRequestLines(cpu, answered(measured), MACHINE_CORES).map((line) => `  ${line}`),
    gcPauseLine(pauses, answered(measured)),
    ...failureLines('failures', measured),
  ]);
  await reportPayouts(stack, measured.ids);
  return measured.ids;
}

const allPaid = (pact: Pact | undefined) => !!pact && pact.payouts.length > 0 && pact.payouts.every((p) => p.status === 'paid');

async function reportPayouts(stack: Stack, ids: string[]): Promise<void> {
  const start = performance.now();
  const unpaid = await waitForPayouts(stack, ids, PAYOUT_TIMEOUT_MS);
  const waited = fixed((performance.now() - start) / 1000, 2);
  print([`payouts: ${ids.length - unpaid.length} of ${ids.length} settled pacts fully paid, ${waited} s after the last cosign`]);
  if (unpaid.length > 0) print([`NOT PAID after ${PAYOUT_TIMEOUT_MS / 1000} s: ${unpaid.slice(0, 5).join(', ')}${unpaid.length > 5 ? ', …' : ''}`], '    ');
}

/** Polls a few pacts at a time until every one has all payouts paid; returns the ids still unpaid at the timeout. */
async function waitForPayouts(stack: Stack, ids: string[], timeoutMs: number): Promise<string[]> {
  let pending = [...ids];
  const deadline = Date.now() + timeoutMs;
  while (pending.length > 0 && Date.now() < deadline) {
    const batch = pending.slice(0, 8);
    const paid = await Promise.all(batch.map(async (id) => allPaid((await stack.client.get(id)).body?.pact)));
    const done = new Set(batch.filter((_, i) => paid[i]));
    pending = pending.filter((id) => !done.has(id));
    if (done.size < batch.length) await new Promise((r) => setTimeout(r, 50));
  }
  return pending;
}
