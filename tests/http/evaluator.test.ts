// The evaluator ends disputes on its own (issue: deliverables and disputes): in each mode, a dispute ends
// with no one but the evaluator acting, in a signed verdict with the right payouts and forfeits; a model that
// hangs or answers garbage ends in the refund at verdictBy.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { JOURNAL_STREAM } from '../../actors/subjects.js';
import { inputHashOf } from '../../machines/pact/rules.js';
import type { Pact } from '../../machines/pact/types.js';
import { verifySignature } from '../../protocol/verify.js';
import { runAudit } from '../support/audit.js';
import { afterDispute, disputeWith, journalOf, payoutsBy } from '../support/disputes.js';
import { startModelServer, type ModelServer } from '../support/model-servers.js';
import { Stack } from '../support/stack.js';
import { until } from '../support/until.js';

/** Short enough that a dispute nobody judges reaches verdictBy within a test; long enough for a judgement. */
const TIMEOUT_MS = 8_000;
const API_KEY = 'sk-test-not-a-real-key-0123456789';
/** The model pinned into every pact of this stack: a model judge asks for it, whatever its mode's setting. */
const PINNED_MODEL = 'judge-model-7';

const test = suite<{ stack: Stack; openai: ModelServer; anthropic: ModelServer; keyFile: string }>('the evaluator ends disputes');

test.before(async (context) => {
  context.openai = await startModelServer('openai', { kind: 'hang' });
  context.anthropic = await startModelServer('anthropic', { kind: 'hang' });
  context.keyFile = join(mkdtempSync(join(tmpdir(), 'pact-model-key-')), 'key');
  writeFileSync(context.keyFile, `${API_KEY}\n`);
  context.stack = await Stack.start({ env: { PACT_EVALUATOR_MODE: 'sandbox', PACT_EVALUATOR_MODEL: PINNED_MODEL, PACT_EVALUATOR_TIMEOUT_MS: String(TIMEOUT_MS) } });
});
test.after(async ({ stack, openai, anthropic }) => {
  await stack.stop();
  await openai.close();
  await anthropic.close();
});

async function settledByVerdict(stack: Stack, id: string): Promise<Pact> {
  const pact = await afterDispute(stack, id);
  assert.is(pact.state, 'SETTLED', JSON.stringify(pact.settlement));
  assert.is(pact.settlement?.outcome, 'settled_by_verdict');
  const verdict = pact.verdict!;
  assert.is(verdict.signer, pact.evaluator.pubkey);
  const { sig, at: _at, ...signedPart } = verdict;
  assert.ok(verifySignature(verdict.signer, signedPart, sig), 'the verdict is signed by the pinned key');
  assert.is(verdict.inputHash, inputHashOf(pact, pact.proposal!));
  return stack.settledPayouts(id);
}

test('/health shows the pinned policy and counts the disputes awaiting a verdict', async ({ stack }) => {
  const health = (await stack.client.request('GET', '/health')).body;
  assert.equal(health.evaluator, { pubkey: stack.evaluator.party, promptVersion: 'pact-eval-1', model: PINNED_MODEL, timeoutMs: TIMEOUT_MS, onFailure: 'refund' });
  assert.not.match(JSON.stringify(health), /seed|secret|apiKey/i);
  await stack.client.request('POST', '/__test/evaluator', { mode: 'none' });
  const { id } = await disputeWith(stack, [{ note: 'done' }]);
  assert.ok((await stack.client.request('GET', '/health')).body.pending.disputes >= 1);
  await stack.client.request('POST', '/__test/evaluator', { mode: 'sandbox' });
  await afterDispute(stack, id); // the sweep finds a dispute opened while no evaluator followed
});

test('the node hears of disputes from its projector: its evaluator has no journal consumer of its own', async ({ stack }) => {
  const nc = await connect({ servers: stack.natsUrl });
  try {
    const names: string[] = [];
    for await (const consumer of (await jetstreamManager(nc)).consumers.list(JOURNAL_STREAM)) names.push(consumer.name);
    assert.ok(names.some((name) => name.startsWith('projector-')), `the projector reads the journal: ${names.join(', ')}`);
    assert.not.ok(names.includes('evaluator'), `no consumer named as PACT_EVALUATOR_CONSUMER: ${names.join(', ')}`);
  } finally {
    await nc.close();
  }
});

test('sandbox: delivered blobs uphold the proposal; the objector forfeits its bond', async ({ stack }) => {
  const { seller, id } = await disputeWith(stack, [{ text: 'a 500-word summary' }]);
  const pact = await settledByVerdict(stack, id);
  assert.is(pact.verdict!.feeFrom, 'objector');
  assert.equal(payoutsBy(pact, seller), { 'pot:seller': '1001', 'bond:seller': '50', 'fee:fee': '75' });
});

test('sandbox: links alone split the pot half way and the fee between both', async ({ stack }) => {
  const { seller, id } = await disputeWith(stack, [{ url: 'https://example.org/summary' }]);
  const pact = await settledByVerdict(stack, id);
  assert.is(pact.verdict!.feeFrom, 'split');
  // pot 1001 at 5000/5000: the odd unit to the first in distribution order; bonds 50 and 75 half forfeited
  assert.equal(payoutsBy(pact, seller), { 'pot:seller': '501', 'pot:buyer': '500', 'bond:seller': '25', 'bond:buyer': '38', 'fee:fee': '62' });
});

test('sandbox: no delivery shown upholds the objection; the proposer forfeits its bond', async ({ stack }) => {
  const { seller, id } = await disputeWith(stack, [{ note: 'trust me' }]);
  const pact = await settledByVerdict(stack, id);
  assert.is(pact.verdict!.feeFrom, 'proposer');
  assert.equal(payoutsBy(pact, seller), { 'pot:buyer': '1001', 'bond:buyer': '75', 'fee:fee': '50' });
});

test('stub: the configured verdict, switched on by the test hook', async ({ stack }) => {
  const switched = await stack.client.request('POST', '/__test/evaluator', { mode: 'stub', verdict: { feeFrom: 'proposer', distribution: 'seller-quarter' } });
  assert.is(switched.status, 400, 'a stub verdict of the wrong shape is refused');
  const { seller, buyer, id } = await (async () => {
    await stack.client.request('POST', '/__test/evaluator', { mode: 'none' });
    return disputeWith(stack, [{ note: 'done' }]);
  })();
  const distribution = [{ party: seller.party, bp: 2500 }, { party: buyer.party, bp: 7500 }];
  const on = await stack.client.request('POST', '/__test/evaluator', { mode: 'stub', verdict: { feeFrom: 'proposer', distribution, reason: 'too long' } });
  assert.equal(on.body, { mode: 'stub' });
  const pact = await settledByVerdict(stack, id);
  assert.is(pact.verdict!.reason, 'too long');
  assert.equal(payoutsBy(pact, seller), { 'pot:seller': '250', 'pot:buyer': '751', 'bond:buyer': '75', 'fee:fee': '50' });
  const audit = await runAudit(stack.natsUrl, id);
  assert.is(audit.code, 0, audit.output);
});

for (const api of ['openai', 'anthropic'] as const) {
  test(`${api}: the model's verdict is applied; it saw the terms, the evidence and the objection`, async (context) => {
    const { stack, keyFile } = context;
    const model = context[api];
    const { seller, buyer, id } = await (async () => {
      await stack.client.request('POST', '/__test/evaluator', { mode: 'none' });
      return disputeWith(stack, [{ text: 'SUMMARY-TEXT-7731' }], 'OBJECTION-REASON-4410');
    })();
    model.set({ kind: 'verdict', judgement: () => ({ distribution: [{ party: seller.party, bp: 6000 }, { party: buyer.party, bp: 4000 }], feeFrom: 'split', reason: 'partly delivered' }) });
    const seen = model.requests.length;
    const on = await stack.client.request('POST', '/__test/evaluator', { mode: api, url: model.url, apiKeyFile: keyFile });
    assert.is(on.status, 200, JSON.stringify(on.body));
    const pact = await settledByVerdict(stack, id);
    assert.is(pact.verdict!.feeFrom, 'split');
    assert.equal(pact.verdict!.distribution, [{ party: seller.party, bp: 6000 }, { party: buyer.party, bp: 4000 }]);
    const request = JSON.stringify(model.requests.slice(seen));
    for (const part of ['SUMMARY-TEXT-7731', 'OBJECTION-REASON-4410', PINNED_MODEL]) assert.ok(request.includes(part), `the model got ${part}`);
  });

  for (const kind of ['hang', 'garbage'] as const) {
    test(`${api}: a model that ${kind === 'hang' ? 'hangs' : 'answers garbage'} ends in the refund at verdictBy`, async (context) => {
      const { stack, keyFile } = context;
      const model = context[api];
      model.set({ kind });
      await stack.client.request('POST', '/__test/evaluator', { mode: api, url: model.url, apiKeyFile: keyFile });
      const { seller, id } = await disputeWith(stack, [{ text: 'a summary' }]);
      const pact = await afterDispute(stack, id, TIMEOUT_MS + 15_000); // the keeper pokes at verdictBy
      assert.is(pact.state, 'CANCELLED');
      assert.is(pact.settlement?.outcome, 'cancelled_verdict_deadline');
      assert.is(pact.verdict, null);
      assert.equal(payoutsBy(await stack.settledPayouts(id), seller), { 'deposit:buyer': '1001', 'bond:seller': '50', 'bond:buyer': '75' });
      await until(() => stack.serverLog().includes(`pact ${id}: no verdict`), 'the evaluator reports its failure');
      assert.not.ok(stack.serverLog().includes(API_KEY), 'the API key is never logged');
    });
  }
}

test('two evaluators judge the same dispute at once: one verdict is applied, the other refused', async ({ stack, openai, keyFile }) => {
  await stack.client.request('POST', '/__test/evaluator', { mode: 'none' });
  const { seller, id } = await disputeWith(stack, [{ text: 'twice judged' }]);
  // The model answers only once both evaluators have asked it, so both submit a verdict.
  openai.set({ kind: 'verdict', together: 2, judgement: () => ({ distribution: [{ party: seller.party, bp: 10000 }], feeFrom: 'objector', reason: 'delivered' }) });
  const modelEnv = { PACT_EVALUATOR_MODE: 'openai', PACT_EVALUATOR_URL: openai.url, PACT_EVALUATOR_API_KEY_FILE: keyFile, PACT_EVALUATOR_MODEL: 'm' };
  const second = await stack.startEvaluatorProcess({ ...modelEnv, PACT_EVALUATOR_CONSUMER: 'evaluator-second' });
  try {
    await stack.client.request('POST', '/__test/evaluator', { mode: 'openai', url: openai.url, apiKeyFile: keyFile });
    await settledByVerdict(stack, id);
    await second.waitFor(new RegExp(`pact ${id}: verdict (applied|refused)`));
    await until(() => new RegExp(`pact ${id}: verdict (applied|refused)`).test(stack.serverLog()), 'the node’s evaluator submitted too');
    const outcomes = [second.output, stack.serverLog()].map((log) => new RegExp(`pact ${id}: verdict (applied|refused)`).exec(log)![1]);
    assert.equal(outcomes.sort(), ['applied', 'refused']);
    const verdicts = (await journalOf(stack, id)).filter((entry) => entry.event.type === 'verdict');
    assert.is(verdicts.length, 1);
  } finally {
    second.child.kill('SIGTERM');
    await second.exited;
  }
});

test.run();
