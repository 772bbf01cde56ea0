import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { FAMILIES, Gen, type FuzzClass } from '../support/fuzz/generators.js';
import { describe, FuzzHttp, pool, sizeOf, type FuzzRequest, type FuzzResult } from '../support/fuzz/http.js';
import { Rng, seedFromEnv } from '../support/fuzz/prng.js';
import { differences, World, type Snapshot } from '../support/fuzz/world.js';
import { Stack } from '../support/stack.js';

// Fuzzing every route with malformed, oversized, replayed and mis-signed requests (tests/support/fuzz/
// generators.ts lists the classes). Pacts in every state are set up first; then, for each family of
// generators: no answer is 5xx, requests with a stated expectation get it (a wrong signature is 401, a
// replay of an applied call is 409, a replayed create is 200 with the same pact), no POST is accepted,
// and nothing changed: each pact's whole record, the list of pacts, the mock rail ledger and the
// journal's last sequence are what they were. A request that a correct server could legitimately apply is
// never sent (the generators' guard withholds it).
//
// Deterministic for one seed: FUZZ_SEED=<n> replays the same choices (the default is fixed). FUZZ_SCALE
// multiplies every class's count (for quick local runs); FUZZ_BUDGET_MS bounds the fuzzing's wall time.

const SEED = seedFromEnv();
const SCALE = Number(process.env.FUZZ_SCALE ?? 1);
const BUDGET_MS = Number(process.env.FUZZ_BUDGET_MS ?? 100_000);
const CONCURRENCY = 16;
const MIN_REQUESTS = 10_000;
const SEED_NOTE = `(fuzz seed ${SEED}: FUZZ_SEED=${SEED} node --import tsx ./node_modules/uvu/bin.js tests/http fuzz)`;

interface Example {
  text: string;
  size: number;
  answer: string;
}

interface ClassReport {
  cls: FuzzClass;
  sent: number;
  withheld: number;
  statuses: Map<string, number>;
  serverErrors: number;
  unexpected: number;
  accepted: number;
  transport: number;
  examples: { serverError?: Example; unexpected?: Example; accepted?: Example; transport?: Example };
  /** How many requests of each kind (the generator's note, digits folded) hit each problem. */
  kinds: { serverError: Map<string, number>; unexpected: Map<string, number>; accepted: Map<string, number>; transport: Map<string, number> };
  changes: string[];
  ms: number;
}

const test = suite('fuzz: malformed, oversized, replayed and mis-signed requests on every route');
let stack: Stack;
let world: World;
let http: FuzzHttp;
let gen: Gen;
let initial: Snapshot;
let latest: Snapshot;
let started = 0;
let budgetHit = false;
const reports: ClassReport[] = [];

test.before(async () => {
  console.log(`fuzz seed ${SEED}${SCALE !== 1 ? `, scale ${SCALE}` : ''}`);
  stack = await Stack.start();
  world = new World(stack, new Rng(SEED).fork('world'));
  await world.setUp();
  gen = new Gen(world);
  const url = new URL(stack.url);
  http = new FuzzHttp(url.hostname, Number(url.port), CONCURRENCY);
  initial = await world.snapshot();
  latest = initial;
  started = Date.now();
});

test.after(async () => {
  http?.close();
  await world?.close();
  await stack?.stop();
});

function keep(report: ClassReport, slot: keyof ClassReport['examples'], req: FuzzRequest, answer: string): void {
  const kind = (req.note ?? req.method).replace(/p_[0-9a-f]{32}/g, 'p_…').replace(/ed25519:\w+/g, 'ed25519:…').replace(/\d{7,}/g, 'N');
  report.kinds[slot].set(kind, (report.kinds[slot].get(kind) ?? 0) + 1);
  const size = sizeOf(req);
  const current = report.examples[slot];
  if (current && current.size <= size) return;
  report.examples[slot] = { text: describe(req), size, answer: answer.slice(0, 300) };
}

async function runClass(cls: FuzzClass): Promise<ClassReport> {
  const report: ClassReport = {
    cls, sent: 0, withheld: 0, statuses: new Map(), serverErrors: 0, unexpected: 0, accepted: 0, transport: 0, examples: {}, changes: [], ms: 0,
    kinds: { serverError: new Map(), unexpected: new Map(), accepted: new Map(), transport: new Map() },
  };
  const t0 = Date.now();
  const rng = new Rng(SEED).fork(`${cls.family}/${cls.name}`);
  const count = Math.max(1, Math.round(cls.count * SCALE));
  const requests = (function* () {
    for (const req of cls.generate(gen, count, rng)) {
      const effect = cls.bypassGuard ? undefined : gen.legitimateEffect(req);
      if (effect) {
        report.withheld++;
        continue;
      }
      yield req;
    }
  })();
  const overBudget = () => {
    if (Date.now() - started > BUDGET_MS) budgetHit = true;
    return budgetHit;
  };
  await pool(requests, CONCURRENCY, async (req) => {
    let result: FuzzResult = await http.send(req);
    if (result.error && !cls.transportErrorsAllowed && !req.raw) result = await http.send(req, true); // a keep-alive race: once more, alone
    report.sent++;
    const label = result.status === undefined ? 'no answer' : String(result.status);
    report.statuses.set(label, (report.statuses.get(label) ?? 0) + 1);
    if (result.status === undefined) {
      report.transport++;
      keep(report, 'transport', req, result.error ?? '');
      return;
    }
    if (result.error && !cls.transportErrorsAllowed) {
      report.transport++;
      keep(report, 'transport', req, result.error);
    }
    const answer = `${result.status} ${result.body}`;
    if (result.status >= 500) {
      report.serverErrors++;
      keep(report, 'serverError', req, answer);
    }
    const problem = req.expect?.(result.status, result.body);
    if (problem) {
      report.unexpected++;
      keep(report, 'unexpected', req, `${problem} — ${answer}`);
    }
    if (result.status >= 200 && result.status < 300 && req.method === 'POST' && !req.allow2xx && !/\/poke(\?|$)/.test(req.path)) {
      report.accepted++;
      keep(report, 'accepted', req, answer);
    }
  }, overBudget);
  const after = await world.snapshot();
  report.changes = differences(latest, after);
  latest = after;
  report.ms = Date.now() - t0;
  reports.push(report);
  return report;
}

function summary(r: ClassReport): string {
  const statuses = [...r.statuses].sort().map(([s, n]) => `${s}×${n}`).join(' ');
  const flags = [
    r.serverErrors ? `${r.serverErrors} × 5xx` : '',
    r.unexpected ? `${r.unexpected} unexpected` : '',
    r.accepted ? `${r.accepted} accepted` : '',
    r.transport ? `${r.transport} transport${r.cls.transportErrorsAllowed ? ' (allowed)' : ''}` : '',
    r.changes.length ? 'STATE CHANGED' : '',
  ].filter(Boolean);
  return `  ${r.cls.family}/${r.cls.name}: ${r.sent} sent${r.withheld ? `, ${r.withheld} withheld` : ''}, ${(r.ms / 1000).toFixed(1)} s — ${statuses}${flags.length ? `  !! ${flags.join(', ')}` : ''}`;
}

/** The most frequent kinds first, at most 12 (all with FUZZ_VERBOSE). */
function tally(kinds: Map<string, number>): string {
  const max = process.env.FUZZ_VERBOSE ? Infinity : 12;
  const sorted = [...kinds].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1));
  const shown = sorted.slice(0, max).map(([kind, n]) => `${n}× ${kind}`);
  return `\n        ${shown.join('\n        ')}${sorted.length > max ? `\n        … ${sorted.length - max} more kinds` : ''}`;
}

function problems(r: ClassReport): string[] {
  const out: string[] = [];
  const name = `${r.cls.family}/${r.cls.name}`;
  const ex = (e: Example | undefined, kinds: Map<string, number>) =>
    (e ? `\n      smallest: ${e.text}\n      -> ${e.answer}` : '') + `\n      kinds: ${tally(kinds)}`;
  if (r.serverErrors) out.push(`${name}: ${r.serverErrors} of ${r.sent} answered >= 500${ex(r.examples.serverError, r.kinds.serverError)}`);
  if (r.unexpected) out.push(`${name}: ${r.unexpected} of ${r.sent} got the wrong answer${ex(r.examples.unexpected, r.kinds.unexpected)}`);
  if (r.accepted) out.push(`${name}: ${r.accepted} of ${r.sent} POSTs were accepted (2xx)${ex(r.examples.accepted, r.kinds.accepted)}`);
  if (r.transport && !r.cls.transportErrorsAllowed) out.push(`${name}: ${r.transport} of ${r.sent} got no proper answer${ex(r.examples.transport, r.kinds.transport)}`);
  if (r.changes.length) out.push(`${name}: state changed while it ran:\n      ${r.changes.join('\n      ')}`);
  return out;
}

for (const family of FAMILIES) {
  test(`${family.name}: no 5xx, the expected refusals, nothing accepted, nothing changed`, async () => {
    const found: string[] = [];
    for (const cls of family.classes) {
      const report = await runClass(cls);
      console.log(summary(report));
      if (process.env.FUZZ_VERBOSE && report.transport) console.log(`    no proper answer: ${tally(report.kinds.transport)}`);
      found.push(...problems(report));
    }
    assert.ok(found.length === 0, `${found.length} problem(s) in ${family.name} ${SEED_NOTE}:\n  ${found.join('\n  ')}\n`);
  });
}

test(`at least ${MIN_REQUESTS} requests within the time budget`, () => {
  const sent = reports.reduce((n, r) => n + r.sent, 0);
  const withheld = reports.reduce((n, r) => n + r.withheld, 0);
  const seconds = (Date.now() - started) / 1000;
  console.log(`fuzz: ${sent} requests in ${seconds.toFixed(1)} s (${(sent / seconds).toFixed(0)}/s), ${withheld} withheld by the guard, seed ${SEED}`);
  assert.not.ok(budgetHit, `the fuzzing ran out of its ${BUDGET_MS} ms budget after ${sent} requests ${SEED_NOTE}`);
  if (SCALE >= 1) assert.ok(sent >= MIN_REQUESTS, `only ${sent} requests were sent ${SEED_NOTE}`);
});

test('nothing changed: every pact, the list, the mock rail ledger and the journal as before the fuzzing', async () => {
  const health = await stack.client.request('GET', '/health');
  assert.is(health.status, 200, `the service is not healthy after the fuzzing ${SEED_NOTE}`);
  const final = await world.snapshot();
  const changed = differences(initial, final);
  assert.ok(changed.length === 0, `state changed during the fuzzing ${SEED_NOTE}:\n  ${changed.join('\n  ')}\n`);
  for (const f of world.fixtures) assert.is(final.pacts[f.label], initial.pacts[f.label], `pact ${f.label} changed ${SEED_NOTE}`);
  assert.is(final.ledger, initial.ledger, `the mock rail ledger changed ${SEED_NOTE}`);
  assert.is(final.journalSeq, initial.journalSeq, `the journal moved ${SEED_NOTE}`);
});

test.run();
