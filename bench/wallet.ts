import type { Stack } from '../tests/support/stack.js';
import { pairedWallet as fundedWallet, usd, walletCall } from '../tests/support/wallet-client.js';
import { print } from './report.js';
import { settings } from './settings.js';
import { fixed, latencySummary } from './stats.js';

const INTERNAL_TOKEN = 'bench internal token';
export const WALLET_BENCH_ENV = { WALLET_INTERNAL_TOKEN: INTERNAL_TOKEN };
const PATH = '/v1/internal/agent-pact/reservations';
const CONCURRENCY = 32;

/**
 * The wallet service's reservations: `settings.reservations` reserve + settle pairs, 32 in flight, first all at
 * one hot wallet (one writer: they queue), then spread over many wallets. Driven from the bench process with
 * fetch (each pair is two internal calls), so the bench's own work shares the machine.
 */
export async function walletReservations(stack: Stack): Promise<void> {
  const count = settings.reservations;
  console.log(`\nwallet: ${count} reservations (reserve, then settle to a payee), ${CONCURRENCY} in flight`);
  const payee = await pairedWallet(stack, '0');
  const hot = await pairedWallet(stack, '500000000');
  print([`one hot wallet          ${await run(stack, count, () => hot, () => payee)}`]);
  const spread: string[] = [];
  for (let i = 0; i < 50; i++) spread.push(await pairedWallet(stack, '10000000'));
  // Each pays the next one: the credits are spread too.
  print([`50 wallets              ${await run(stack, count, (i) => spread[i % 50]!, (i) => spread[(i + 1) % 50]!)}`]);
}

async function run(stack: Stack, count: number, payerOf: (i: number) => string, payeeOf: (i: number) => string): Promise<string> {
  const latencies: number[] = [];
  let next = 0;
  let failures = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const i = next++;
        const t0 = performance.now();
        const ok = await pair(stack, payerOf(i), payeeOf(i), `p_bench_${started}_${i}`);
        latencies.push(performance.now() - t0);
        if (!ok) failures++;
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  return `${fixed(count / seconds)} reservations/s (reserve + settle), per pair ${latencySummary(latencies)}${failures ? `, ${failures} FAILED` : ''}`;
}

async function pair(stack: Stack, walletId: string, payee: string, pactId: string): Promise<boolean> {
  const reserved = await call(stack, 'POST', PATH, { walletId, amount: usd('10000'), activity: { kind: 'pact', pactId, party: 'ed25519:bench', role: 'buyer' } }, internal);
  if (reserved.status !== 201) return false;
  const id = reserved.body.reservation.id as string;
  const settled = await call(stack, 'POST', `${PATH}/${id}/settle`, { activityState: 'SETTLED', debit: usd('10000'), credits: [{ walletId: payee, amount: usd('10000') }], reference: id }, internal);
  return settled.status === 200;
}

const internal = { authorization: `Bearer ${INTERNAL_TOKEN}` };
const call = walletCall;

/** A paired wallet topped up with `funded` micro-USD through a mock checkout; its id. */
const pairedWallet = async (stack: Stack, funded: string) => (await fundedWallet(stack, funded)).id;
