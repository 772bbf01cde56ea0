// The model judges against local servers that speak each API: a good answer becomes a judgement; hanging,
// garbage, an invalid verdict, a refusal or an error status is an EvaluatorFailure that never names the key.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EvaluatorFailure, type FrozenInput, type Judge } from '../../evaluator/judge.js';
import { judgementOf } from '../../evaluator/judgement.js';
import { AnthropicJudge } from '../../evaluator/judges/anthropic.js';
import { OpenAiJudge } from '../../evaluator/judges/openai.js';
import { ALL_BLOB_TEXT_BYTES, BLOB_TEXT_BYTES, promptOf, renderInput } from '../../evaluator/model-input.js';
import { startModelServer, type Behaviour, type ModelApi } from '../support/model-servers.js';
import { partyKey } from '../support/pacts.js';

const [seller, buyer] = [1, 2].map((n) => partyKey(n).party) as [`ed25519:${string}`, `ed25519:${string}`];
const KEY = 'sk-unit-test-key-99887766';
const text = (s: string) => new TextEncoder().encode(s);

const input = (evidence: FrozenInput['evidence'] = [{ blob: 'a'.repeat(64), size: 14, bytes: text('BLOB-TEXT-5521') }]): FrozenInput => ({
  pactId: 'p_0',
  policy: { model: 'pinned-model-x', promptVersion: 'pact-eval-1' },
  inputHash: 'f'.repeat(64),
  terms: { spec: 'TERMS-SPEC-3310' },
  proposer: seller,
  parties: [{ party: seller, deposit: '0', bond: '50' }, { party: buyer, deposit: '1001', bond: '75' }],
  asset: 'USDC',
  pot: '1001',
  distribution: [{ party: seller, bp: 10000 }],
  evidence,
  objection: { by: buyer, reason: 'OBJECTION-1177' },
});

const judgeFor = (api: ModelApi, url: string): Judge =>
  new (api === 'openai' ? OpenAiJudge : AnthropicJudge)({ url, apiKey: KEY });

async function failure(judging: Promise<unknown>): Promise<EvaluatorFailure> {
  try {
    await judging;
  } catch (error) {
    assert.instance(error, EvaluatorFailure);
    assert.not.ok(String((error as Error).message).includes(KEY), 'the key is never in a failure');
    return error as EvaluatorFailure;
  }
  assert.unreachable('expected an EvaluatorFailure');
  throw new Error('unreachable');
}

for (const api of ['openai', 'anthropic'] as const) {
  test(`${api}: a verdict comes back as a judgement; the request carried the pinned model and prompt, the key and the input`, async () => {
    const verdict = { distribution: [{ party: seller, bp: 4000 }, { party: buyer, bp: 6000 }], feeFrom: 'split', reason: 'half done' };
    const server = await startModelServer(api, { kind: 'verdict', judgement: () => verdict });
    try {
      const judged = await judgeFor(api, server.url).judge(input(), AbortSignal.timeout(5_000));
      assert.equal(judged, verdict);
      const [request] = server.requests;
      assert.is(request!.body.model, 'pinned-model-x');
      if (api === 'openai') assert.is(request!.headers.authorization, `Bearer ${KEY}`);
      else assert.is(request!.headers['x-api-key'], KEY);
      const sent = JSON.stringify(request!.body);
      assert.ok(sent.includes(JSON.stringify(promptOf('pact-eval-1')).slice(1, 80)), 'the system prompt');
      for (const part of ['BLOB-TEXT-5521', 'TERMS-SPEC-3310', 'OBJECTION-1177']) assert.ok(sent.includes(part), part);
    } finally {
      await server.close();
    }
  });

  const broken: [string, Behaviour][] = [
    ['garbage', { kind: 'garbage' }],
    ['an invalid verdict', { kind: 'invalid' }],
    ['a refusal', { kind: 'refusal' }],
    ['status 500', { kind: 'status', status: 500 }],
  ];
  for (const [what, behaviour] of broken) {
    test(`${api}: ${what} is an evaluator failure`, async () => {
      const server = await startModelServer(api, behaviour);
      try {
        await failure(judgeFor(api, server.url).judge(input(), AbortSignal.timeout(5_000)));
      } finally {
        await server.close();
      }
    });
  }

  test(`${api}: a pact pinned to a prompt version this build lacks is an evaluator failure, and the model is not asked`, async () => {
    const server = await startModelServer(api, { kind: 'garbage' });
    try {
      const pinned = { ...input(), policy: { model: 'm', promptVersion: 'pact-eval-0' } };
      await failure(judgeFor(api, server.url).judge(pinned, AbortSignal.timeout(5_000)));
      assert.is(server.requests.length, 0);
    } finally {
      await server.close();
    }
  });

  test(`${api}: a model that hangs is an evaluator failure once the time-out fires`, async () => {
    const server = await startModelServer(api, { kind: 'hang' });
    try {
      const started = Date.now();
      const failed = await failure(judgeFor(api, server.url).judge(input(), AbortSignal.timeout(300)));
      assert.match(failed.message, /time-out/);
      assert.ok(Date.now() - started < 5_000);
    } finally {
      await server.close();
    }
  });
}

test('a verdict must name funded parties once each, sum to 10000 and have nothing else', () => {
  const judge = (value: unknown) => () => judgementOf(value, input());
  const base = { distribution: [{ party: seller, bp: 10000 }], feeFrom: 'objector', reason: 'ok' };
  assert.equal(judgementOf(base, input()), base);
  const outsider = partyKey(9).party;
  for (const bad of [
    { ...base, distribution: [{ party: outsider, bp: 10000 }] },
    { ...base, distribution: [{ party: seller, bp: 5000 }, { party: seller, bp: 5000 }] },
    { ...base, distribution: [{ party: seller, bp: 9999 }] },
    { ...base, extra: 1 },
    { ...base, feeFrom: 'nobody' },
    { ...base, reason: 'x'.repeat(4097) },
    { ...base, distribution: [{ party: seller, bp: 10000, note: 'x' }] },
    { ...base, distribution: [{ party: seller, bp: 5000 }, { party: buyer, bp: 5000 }] }, // objector pays, yet the pot is not as proposed
    { ...base, feeFrom: 'proposer' }, // proposer pays, yet the pot is as proposed
    'not an object',
  ]) {
    assert.throws(judge(bad), (error: unknown) => error instanceof EvaluatorFailure, JSON.stringify(bad).slice(0, 80));
  }
});

test('blobs reach the model as text within the budgets, or marked binary', () => {
  const big = new Uint8Array(100 * 1024).fill(0x61);
  const rendered = JSON.parse(renderInput(input([
    { blob: '1'.repeat(64), size: 4, bytes: Uint8Array.from([0xff, 0xfe, 0x00, 0x01]) },
    { blob: '2'.repeat(64), size: big.length, bytes: big },
    { blob: '3'.repeat(64), size: big.length, bytes: big },
    { blob: '4'.repeat(64), size: big.length, bytes: big },
    { blob: '5'.repeat(64), size: big.length, bytes: big },
    { blob: '6'.repeat(64), size: big.length, bytes: big },
    { url: 'https://example.org/x' },
  ])));
  const [binary, first, , , fourth, fifth, link] = rendered.evidence;
  assert.is(binary.binary, true);
  assert.is(first.text.length, BLOB_TEXT_BYTES);
  assert.is(first.truncated, true);
  assert.is(fourth.text.length, ALL_BLOB_TEXT_BYTES - 3 * BLOB_TEXT_BYTES);
  assert.is(fifth.omitted, 'input budget');
  assert.equal(link, { url: 'https://example.org/x' });
});

test('a prompt version without a prompt file is refused', () => {
  assert.throws(() => promptOf('pact-eval-999'), /no evaluator prompt/);
  assert.throws(() => promptOf('../../etc/passwd'), /no evaluator prompt/);
});

test.run();
