/**
 * End-to-end throughput of the write path: full pact lifecycles over HTTP against the real service
 * (a child process running runtime/main.ts) on a private nats-server, as tests/support/stack.ts starts them.
 *
 *   npm run bench                       BENCH_PACTS=300 BENCH_CONCURRENCY=32 BENCH_WARMUP=20
 *   BENCH_NODE_ARGS='--cpu-prof --cpu-prof-dir=/tmp/prof' npm run bench    profiles the service
 *
 * One lifecycle = create, fund × 2 (each the two-call 402 flow), propose, cosign: 7 signed HTTP calls.
 * Nonces are tracked from each response's `pact.stateNonce`, so the timed phase makes no GETs.
 */
import { execFileSync } from 'node:child_process';
import { generateKeyPairSync, sign, verify, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { loadavg, totalmem } from 'node:os';
import { PactClient, type HttpResult } from '../client/pact-client.js';
import type { PactSpec } from '../machines/pact/spec.js';
import type { Pact } from '../machines/pact/types.js';
import { canonicalDigest } from '../protocol/digest.js';
import { generateKeyPair, signed, type KeyPair } from '../protocol/sign.js';
import { signedPart } from '../protocol/signed-call.js';
import { verifySignature } from '../protocol/verify.js';
import { findNatsServer } from '../runtime/nats-server.js';
import { Stack } from '../tests/support/stack.js';
import { fixed, percentile, Tally } from './stats.js';

const PACTS = envInt('BENCH_PACTS', 300);
const CONCURRENCY = envInt('BENCH_CONCURRENCY', 32);
const WARMUP = envInt('BENCH_WARMUP', 20);
const PAYOUT_TIMEOUT_MS = 120_000;
const PAYMENT = JSON.stringify({ scheme: 'mock' });

function envInt(name: string, fallback: number): number {
  const value = Number(process.env[name] || fallback);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer`);
  return value;
}

// ---- machine ----

function machine(): string[] {
  const cpu = /^model name\s*:\s*(.+)$/m.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown';
  const run = (file: string, args: string[]) => execFileSync(file, args, { encoding: 'utf8' }).trim();
  const nats = findNatsServer();
  return [
    `cpu            ${cpu}`,
    `nproc          ${run('nproc', [])}`,
    `memory         ${fixed(totalmem() / 2 ** 30)} GiB`,
    `node           ${process.version}`,
    `nats-server    ${nats ? run(nats, ['--version']) : 'not found'}`,
    `load average   ${loadavg().map((n) => fixed(n, 2)).join(' ')} (before the run; other work on the machine skews the figures)`,
  ];
}

// ---- single-core Ed25519 verify rate ----

function ratePerSecond(durationMs: number, op: () => boolean): number {
  let count = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < durationMs) {
    for (let i = 0; i < 100; i++) if (op()) count++;
    elapsed = performance.now() - start;
  }
  return (count / elapsed) * 1000;
}

/** node:crypto verify of a 32-byte digest with a cached KeyObject: the server's per-call primitive. */
function rawVerifyRate(): number {
  const { publicKey, privateKey }: { publicKey: KeyObject; privateKey: KeyObject } = generateKeyPairSync('ed25519');
  const digest = canonicalDigest({ bench: 'verify' });
  const sig = sign(null, digest, privateKey);
  return ratePerSecond(2000, () => verify(null, digest, publicKey, sig));
}

/** The gateway's full check of one signed call: JCS + SHA-256 + verify (protocol/verify.ts). */
function signedCallVerifyRate(): number {
  const key = generateKeyPair();
  const call = signed({ action: 'pacts.cosign', call: {}, pactId: `p_${'0'.repeat(32)}`, stateNonce: 3, issuedAt: Date.now(), signer: key.party }, key);
  return ratePerSecond(1000, () => verifySignature(call.signer, signedPart(call), call.sig));
}

// ---- lifecycles ----

class Recorder {
  signedCalls = 0;
  latenciesMs: number[] = [];
  byRoute = new Map<string, number[]>();
  failures = new Tally();

  record(label: string, ms: number): void {
    this.latenciesMs.push(ms);
    const route = this.byRoute.get(label) ?? [];
    this.byRoute.set(label, route);
    route.push(ms);
  }
}

/** CPU seconds (user + system) so far of this process and each child it started (nats-server, the service). */
function cpuSeconds(): Map<string, number> {
  const tick = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }));
  let children: string[] = [];
  try {
    children = readFileSync(`/proc/${process.pid}/task/${process.pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
  } catch {
    // kernel without CONFIG_PROC_CHILDREN: report this process only
  }
  const seconds = new Map<string, number>();
  for (const pid of [String(process.pid), ...children]) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = pid === String(process.pid) ? 'bench client' : /\((.*)\)/.exec(stat)![1] === 'nats-server' ? 'nats-server' : 'pact service';
      seconds.set(name, (Number(fields[11]) + Number(fields[12])) / tick);
    } catch {
      // the child is gone
    }
  }
  return seconds;
}

const specOf = (seller: KeyPair, buyer: KeyPair): PactSpec => ({
  rail: 'mock',
  parties: [
    { party: seller.party, deposit: { amount: '0', asset: 'USDC' }, bond: { amount: '50', asset: 'USDC' }, required: true },
    { party: buyer.party, deposit: { amount: '1001', asset: 'USDC' }, bond: { amount: '75', asset: 'USDC' }, required: true },
  ],
  proposer: seller.party,
  terms: { spec: 'summarise the attached paper in 200 words' },
  minParties: 2,
});

/** One signed HTTP call, timed; anything but `expected` is tallied and yields undefined. */
async function step(
  client: PactClient, rec: Recorder, label: string, expected: number, path: string, body: unknown, headers: Record<string, string> = {},
): Promise<HttpResult<{ pact: Pact }> | undefined> {
  rec.signedCalls++;
  const start = performance.now();
  try {
    const result = await client.request<{ pact: Pact }>('POST', path, body, headers);
    rec.record(label, performance.now() - start);
    if (result.status === expected) return result;
    const code = (result.body as { error?: string } | undefined)?.error ?? '-';
    rec.failures.add(`${label}: HTTP ${result.status} ${code}`);
  } catch (error) {
    rec.failures.add(`${label}: threw ${error instanceof Error ? error.message : String(error)}`);
  }
  return undefined;
}

/** create → fund (seller) → fund (buyer) → propose → cosign. Resolves to the pact id when it settled. */
async function lifecycle(client: PactClient, rec: Recorder, [seller, buyer]: Parties): Promise<string | undefined> {
  const created = await step(client, rec, 'create', 200, '/pacts', client.signedCall(seller, 'pacts.create', '', 0, specOf(seller, buyer)));
  if (!created) return undefined;
  const id = created.body.pact.id;
  let nonce = created.body.pact.stateNonce;
  for (const key of [seller, buyer]) {
    const call = client.signedCall(key, 'pacts.fund', id, nonce, {});
    if (!(await step(client, rec, 'fund (proofless)', 402, `/pacts/${id}/fund`, call))) return undefined;
    const funded = await step(client, rec, 'fund (X-PAYMENT)', 200, `/pacts/${id}/fund`, call, { 'x-payment': PAYMENT });
    if (!funded) return undefined;
    nonce = funded.body.pact.stateNonce;
  }
  const proposal = { evidence: [{ note: 'delivered' }], distribution: [{ party: seller.party, bp: 7000 }, { party: buyer.party, bp: 3000 }] };
  const proposed = await step(client, rec, 'propose', 200, `/pacts/${id}/propose`, client.signedCall(seller, 'pacts.propose', id, nonce, proposal));
  if (!proposed) return undefined;
  const cosign = client.signedCall(buyer, 'pacts.cosign', id, proposed.body.pact.stateNonce, {});
  const settled = await step(client, rec, 'cosign', 200, `/pacts/${id}/cosign`, cosign);
  if (!settled) return undefined;
  if (settled.body.pact.state !== 'SETTLED') rec.failures.add(`cosign: 200 but state ${settled.body.pact.state}`);
  return id;
}

type Parties = [seller: KeyPair, buyer: KeyPair];

/** Key pairs made ahead (noble key generation is client work, not the service's). */
const partiesFor = (count: number): Parties[] => Array.from({ length: count }, () => [generateKeyPair(), generateKeyPair()]);

/** Runs one lifecycle per entry of `parties`, `concurrency` at a time; returns the ids that settled, in completion order. */
async function runLifecycles(client: PactClient, rec: Recorder, parties: Parties[], concurrency: number): Promise<string[]> {
  const ids: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < parties.length) {
      const id = await lifecycle(client, rec, parties[next++]!);
      if (id) ids.push(id);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, parties.length) }, worker));
  return ids;
}

// ---- payouts ----

const allPaid = (pact: Pact | undefined) => !!pact && pact.payouts.length > 0 && pact.payouts.every((p) => p.status === 'paid');

/** Polls a few pacts at a time until every one has all payouts paid; returns the ids still unpaid at the timeout. */
async function waitForPayouts(client: PactClient, ids: string[], timeoutMs: number): Promise<string[]> {
  let pending = [...ids];
  const deadline = Date.now() + timeoutMs;
  while (pending.length > 0 && Date.now() < deadline) {
    const batch = pending.slice(0, 8);
    const paid = await Promise.all(batch.map(async (id) => allPaid((await client.get(id)).body?.pact)));
    const done = new Set(batch.filter((_, i) => paid[i]));
    pending = pending.filter((id) => !done.has(id));
    if (done.size < batch.length) await new Promise((r) => setTimeout(r, 50));
  }
  return pending;
}

// ---- report ----

function report(rec: Recorder, settled: number, wallMs: number, verifyRate: number): string[] {
  const seconds = wallMs / 1000;
  const sorted = [...rec.latenciesMs].sort((a, b) => a - b);
  const signedRate = rec.signedCalls / seconds;
  return [
    `pacts settled      ${settled} of ${PACTS} in ${fixed(seconds, 2)} s (concurrency ${CONCURRENCY}, warm-up ${WARMUP} excluded)`,
    `pacts/s            ${fixed(settled / seconds)}`,
    `signed commands/s  ${fixed(signedRate)} (${rec.signedCalls} signed calls, incl. proofless fund calls)`,
    `HTTP requests/s    ${fixed(rec.latenciesMs.length / seconds)} (${rec.latenciesMs.length} requests answered, no GETs in the timed phase)`,
    `latency per signed request  p50 ${fixed(percentile(sorted, 50), 2)} ms, p99 ${fixed(percentile(sorted, 99), 2)} ms, max ${fixed(sorted.at(-1) ?? NaN, 2)} ms`,
    `signed commands/s ÷ single-core verify/s  ${fixed(signedRate / verifyRate, 3)}`,
    ...[...rec.byRoute].map(([label, ms]) => {
      const route = [...ms].sort((a, b) => a - b);
      return `  ${label.padEnd(17)} p50 ${fixed(percentile(route, 50), 2)} ms, p99 ${fixed(percentile(route, 99), 2)} ms (${route.length})`;
    }),
  ];
}

function cpuReport(before: Map<string, number>, after: Map<string, number>, wallMs: number): string[] {
  return [...after].map(([name, s]) => {
    const used = s - (before.get(name) ?? 0);
    return `${name.padEnd(13)} ${fixed(used, 2)} s CPU = ${fixed((used * 100_000) / wallMs, 0)}% of one core`;
  });
}

function printFailures(title: string, rec: Recorder): void {
  if (rec.failures.total === 0) return console.log(`${title}: no failures`);
  console.log(`${title}: ${rec.failures.total} failures`);
  for (const [key, n] of rec.failures.entries()) console.log(`  ${String(n).padStart(6)}  ${key}`);
}

async function main(): Promise<void> {
  console.log('machine');
  for (const line of machine()) console.log(`  ${line}`);

  const verifyRate = rawVerifyRate();
  const callVerifyRate = signedCallVerifyRate();
  console.log('\nEd25519, one core, this run (server not started yet)');
  console.log(`  node:crypto verify, 32-byte digest, cached KeyObject  ${fixed(verifyRate, 0)} /s`);
  console.log(`  verifySignature of a signed call (JCS + SHA-256 + verify)  ${fixed(callVerifyRate, 0)} /s`);

  const stack = await Stack.start({ nodeArgs: (process.env.BENCH_NODE_ARGS ?? '').split(' ').filter(Boolean) });
  try {
    const client = new PactClient(stack.url); // signs with Date.now(); the server clock has no offset
    const warm = new Recorder();
    await runLifecycles(client, warm, partiesFor(WARMUP), CONCURRENCY);
    printFailures('\nwarm-up', warm);

    const rec = new Recorder();
    const parties = partiesFor(PACTS);
    const cpuBefore = cpuSeconds();
    const start = performance.now();
    const ids = await runLifecycles(client, rec, parties, CONCURRENCY);
    const wallMs = performance.now() - start;
    const cpuAfter = cpuSeconds();
    console.log(`\nlifecycles (create, fund ×2 via 402, propose, cosign) over HTTP`);
    for (const line of report(rec, ids.length, wallMs, verifyRate)) console.log(`  ${line}`);
    console.log('  CPU in the timed phase (2 cores are shared by all of these and anything else running)');
    for (const line of cpuReport(cpuBefore, cpuAfter, wallMs)) console.log(`    ${line}`);
    printFailures('  timed phase', rec);

    const waitStart = performance.now();
    const unpaid = await waitForPayouts(client, ids, PAYOUT_TIMEOUT_MS);
    const waitedS = fixed((performance.now() - waitStart) / 1000, 2);
    console.log(`\npayouts  ${ids.length - unpaid.length} of ${ids.length} settled pacts fully paid, ${waitedS} s after the last cosign`);
    if (unpaid.length > 0) console.log(`  NOT PAID after ${PAYOUT_TIMEOUT_MS / 1000} s: ${unpaid.slice(0, 5).join(', ')}${unpaid.length > 5 ? ', …' : ''}`);
  } finally {
    await stack.stop();
  }
}

await main();
