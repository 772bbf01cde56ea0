import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mppPayer, x402Payer } from '../client/evm-payers.js';
import type { Pact } from '../machines/pact/types.js';
import type { HttpResult } from '../client/pact-client.js';
import { railReady, type RailHealth } from '../rails/rail.js';
import { generateKeyPair } from '../protocol/sign.js';
import { evmRailEnv, startEvmChain, type EvmChain } from '../tests/support/evm-chain.js';
import { tradeSpec } from '../tests/support/parties.js';
import type { Stack } from '../tests/support/stack.js';
import { using } from './cleanup.js';
import { print } from './report.js';
import { settings } from './settings.js';
import { latencySummary } from './stats.js';

const BUDGET = 10n ** 12n;

/**
 * The real rails on a local chain (ganache in the bench's process, instamine): `settings.railPacts` trades one
 * after another on x402 and on mpp, each funded by both parties through the SDK's payers and settled by cosign.
 * Collect latency is the paid fund call (verify, settle on chain, journal); payout latency runs from the cosign's
 * answer until the pact shows its three payouts paid (payout worker, token transfers, recorded on the pact).
 */
export async function railLatencies(withStack: (env: Record<string, string>, use: (stack: Stack) => Promise<void>) => Promise<void>): Promise<void> {
  const count = settings.railPacts;
  console.log(`\nrails: ${count} trades one at a time on x402 and on mpp, local chain (ganache 7.9, in the bench's process)`);
  await using(() => startEvmChain({ payers: 2, mintEach: BUDGET }), (chain) => chain.stop(), async (chain) => {
    const dir = mkdtempSync(join(tmpdir(), 'pact-bench-rails-'));
    try {
      const secretFile = join(dir, 'mpp.secret');
      writeFileSync(secretFile, 'the bench mpp challenge secret, more than 32 bytes');
      await withStack({ ...evmRailEnv(chain, dir), PACT_MPP_SECRET_FILE: secretFile }, async (stack) => {
        for (const rail of ['x402', 'mpp'] as const) {
          await untilRailReady(stack, rail);
          print(await trades(stack, chain, rail, count));
        }
      });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
}

/** How long a rail may take to say it is ready: the service judges it again every 5 s. */
const READY_WAIT_MS = 60_000;

/**
 * Waits until `/health` says `rail` is ready: the service refuses new pacts on a rail it has not judged ready
 * (503 `rail_not_ready`), as it does when its first look at the chain, at start, gets no answer in time.
 */
async function untilRailReady(stack: Stack, rail: string): Promise<void> {
  const deadline = Date.now() + READY_WAIT_MS;
  for (;;) {
    const { status, body } = await stack.client.request<{ paymentRails?: Record<string, RailHealth> }>('GET', '/health');
    const railHealth = body?.paymentRails?.[rail];
    if (railHealth && railReady(railHealth)) return;
    if (Date.now() > deadline) throw new Error(`the ${rail} rail was not ready after ${READY_WAIT_MS / 1000} s: GET /health answered ${status} ${JSON.stringify(railHealth ?? body)}`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}

/**
 * The answer of `call`, made again once `/health` says the rail is ready when the service refused it as not
 * ready (as a client does after `retryAfter`): the service judges the chain every few seconds, and one look
 * that gets no answer in time (the chain here shares the bench's process) refuses new pacts until the next.
 * Each such wait is printed.
 */
async function whenReady<T>(stack: Stack, rail: string, call: () => Promise<HttpResult<T>>): Promise<HttpResult<T>> {
  for (let attempt = 1; ; attempt++) {
    const answer = await call();
    if (answer.status !== 503 || (answer.body as { error?: string }).error !== 'rail_not_ready' || attempt === READY_ATTEMPTS) return answer;
    console.log(`  the ${rail} rail was not ready for a create; waiting for /health to say it is`);
    await untilRailReady(stack, rail);
  }
}

const READY_ATTEMPTS = 3;

async function trades(stack: Stack, chain: EvmChain, rail: 'x402' | 'mpp', count: number): Promise<string[]> {
  const collects: number[] = [];
  const payouts: number[] = [];
  const [buyerWallet, sellerWallet] = [chain.payers[0]!, chain.payers[1]!];
  for (let i = 0; i < count; i++) {
    const [seller, buyer] = [generateKeyPair(), generateKeyPair()];
    const created = await whenReady(stack, rail, () => stack.client.create(seller, tradeSpec(seller, buyer, { rail })));
    if (created.status !== 200) throw new Error(`create on ${rail}: ${JSON.stringify(created.body)}`);
    const id = created.body.pact.id as string;
    for (const [key, wallet] of [[buyer, buyerWallet], [seller, sellerWallet]] as const) {
      const fund =
        rail === 'x402'
          ? () => stack.client.fundWith(key, id, timedPay(x402Payer({ account: wallet.account, budget: BUDGET }), collects))
          : () => stack.client.fundWithMpp(key, id, wallet.address, timedPay(mppPayer({ account: wallet.account, budget: BUDGET }), collects));
      const funded = await fund();
      if (funded.status !== 200) throw new Error(`fund on ${rail}: ${JSON.stringify(funded.body)}`);
      collects.push(performance.now() - collects.pop()!);
    }
    await stack.client.propose(seller, id, { evidence: [{ note: 'done' }], distribution: [{ party: seller.party, bp: 10000 }] });
    const cosigned = await stack.client.cosign(buyer, id);
    if (cosigned.status !== 200) throw new Error(`cosign on ${rail}: ${JSON.stringify(cosigned.body)}`);
    const settledAt = performance.now();
    await allPaid(stack, id);
    payouts.push(performance.now() - settledAt);
  }
  return [`${rail} collect (paid fund call)      ${latencySummary(collects)}`, `${rail} payouts (cosign → 3 paid)    ${latencySummary(payouts)}`];
}

/** `pay`, noting when it has made the proof: the paid call's clock starts there (signing is the payer's, not ours). */
function timedPay<A>(pay: (answer: A) => Promise<string>, starts: number[]) {
  return async (answer: A) => {
    const proof = await pay(answer);
    starts.push(performance.now());
    return proof;
  };
}

async function allPaid(stack: Stack, id: string): Promise<void> {
  for (;;) {
    const pact = (await stack.client.get(id)).body.pact as Pact;
    if (pact.payouts.length > 0 && pact.payouts.every((p) => p.status === 'paid')) return;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
