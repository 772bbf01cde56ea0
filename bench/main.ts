/**
 * `npm run bench`: the service's write path, read path, memory, cold activation, offer search and the Agent Stream, measured from a
 * separate load generator process so that the figures are the server's. See README, Benchmark.
 *
 *   BENCH_PACTS BENCH_WARMUP BENCH_CONCURRENCY BENCH_READ_SECONDS BENCH_READ_CONCURRENCY BENCH_STORED BENCH_COLD BENCH_OFFERS BENCH_EVENTS
 *   BENCH_STREAM_STORED BENCH_RAIL_PACTS BENCH_RESERVATIONS BENCH_PHASES=commands,stored,offers,stream,rails,wallet
 *   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof'   node arguments for the service
 *   BENCH_PIN=1   the load and the servers on cores of their own (bench/pinning.ts)
 */
import { Stack } from '../tests/support/stack.js';
import { using } from './cleanup.js';
import { LoadGenerator } from './load-generator.js';
import { machineDescription, rawVerifyRate, signedCallVerifyRate } from './machine.js';
import { reads } from './reads.js';
import { pinned, startPinning } from './pinning.js';
import { stackProcesses } from './processes.js';
import { print } from './report.js';
import { settings } from './settings.js';
import { offerSearch } from './offers.js';
import { railLatencies } from './rails.js';
import { WALLET_BENCH_ENV, walletReservations } from './wallet.js';
import { streamPhase } from './stream.js';
import { signedCommands } from './signed-commands.js';
import { fixed } from './stats.js';
import { PASSIVATING_ENV, storedPacts } from './stored.js';
import { gcPauses } from './gc-pauses.js';

/** The service as `npm start` runs it: with its evaluator following the journal (tests turn it off). */
const AS_NPM_START = { PACT_EVALUATOR_MODE: process.env.PACT_EVALUATOR_MODE ?? 'sandbox' };

const withStack = <T>(env: Record<string, string>, use: (stack: Stack) => Promise<T>) =>
  using(startPinned(env), (stack) => stack.stop(), use);

const startPinned = (env: Record<string, string>) => async () => {
  const stack = await Stack.start({ env: { ...AS_NPM_START, ...gcPauses.env, ...env }, nodeArgs: [...gcPauses.nodeArgs, ...settings.nodeArgs] });
  return pinned(stack, () => Object.values(stackProcesses(stack)), 'server', (started) => started.stop());
};

/** Restarts the service of a stack started by `startPinned`, pinned again as it was. */
const restartPinned = async (stack: Stack) => {
  await stack.restartWith({});
  await pinned(stack, () => [stack.serverPid!], 'server', async () => undefined); // the stack is stopped by whoever started it
};

async function main(): Promise<void> {
  console.log('machine');
  print([...machineDescription(), ...startPinning()]);
  const verifyRate = rawVerifyRate();
  console.log('\nEd25519, one core, this run (server not started yet)');
  print([
    `node:crypto verify, 32-byte digest, cached KeyObject  ${fixed(verifyRate, 0)} /s`,
    `verifySignature of a signed call (JCS + SHA-256 + verify)  ${fixed(signedCallVerifyRate(), 0)} /s`,
  ]);

  const startLoad = () => {
    const load = LoadGenerator.start();
    return pinned(load, () => [load.pid], 'load', (started) => started.stop());
  };
  await using(startLoad, (load) => load.stop(), async (load) => {
    const clients = { 'bench': process.pid, 'load generator': load.pid };
    const phase = (name: string) => settings.phases.has(name);
    if (phase('commands')) {
      await withStack({}, async (stack) => {
        const settled = await signedCommands(load, stack, clients, verifyRate);
        await reads(load, stack, clients, settled);
      });
    }
    if (phase('stored')) await withStack(PASSIVATING_ENV, (stack) => storedPacts(load, stack, clients));
    if (phase('offers')) await withStack({}, (stack) => offerSearch(load, stack, clients));
    const streamStack = (use: (stack: Stack) => Promise<void>) => withStack({ PACT_RATE_LIMIT_PULLS: '0' }, use);
    if (phase('stream')) await streamStack((stack) => streamPhase(load, stack, clients, streamStack, restartPinned));
    if (phase('rails')) await railLatencies(withStack);
    if (phase('wallet')) await withStack(WALLET_BENCH_ENV, walletReservations);
  });
}

process.on('exit', () => gcPauses.remove()); // however the bench ends (bench/cleanup.ts exits on Ctrl-C)
await main();
