// The sandbox judge's rule (README, "The evaluator"), and that every distribution it gives can stand.
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { sharesProblem } from '../../machines/pact/rules.js';
import type { FrozenInput } from '../../evaluator/judge.js';
import { halfWay, refundShares, SandboxJudge } from '../../evaluator/judges/sandbox.js';
import { StubJudge } from '../../evaluator/judges/stub.js';
import { EvaluatorFailure } from '../../evaluator/judge.js';
import { partyKey } from '../support/pacts.js';

const [seller, buyer, third] = [1, 2, 3].map((n) => partyKey(n).party);

const input = (evidence: FrozenInput['evidence'], deposits = ['0', '1001']): FrozenInput => ({
  pactId: 'p_x',
  policy: { model: 'sandbox', promptVersion: 'pact-eval-1' },
  inputHash: 'h',
  terms: { spec: 'a 500-word summary' },
  proposer: seller!,
  parties: [{ party: seller!, deposit: deposits[0]!, bond: '50' }, { party: buyer!, deposit: deposits[1]!, bond: '75' }],
  asset: 'USDC',
  pot: String(BigInt(deposits[0]!) + BigInt(deposits[1]!)),
  distribution: [{ party: seller!, bp: 10000 }],
  evidence,
  objection: { by: buyer!, reason: 'too long' },
});

test('a delivered blob upholds the proposal as proposed; the objector pays', async () => {
  const judged = await new SandboxJudge().judge(input([{ blob: 'ab', size: 3, bytes: new Uint8Array(3) }, { note: 'n' }]));
  assert.equal(judged.distribution, [{ party: seller, bp: 10000 }]);
  assert.is(judged.feeFrom, 'objector');
});

test('links alone meet half way between the proposal and a refund; the fee is split', async () => {
  const judged = await new SandboxJudge().judge(input([{ url: 'https://example.org' }]));
  assert.equal(judged.distribution, [{ party: seller, bp: 5000 }, { party: buyer, bp: 5000 }]);
  assert.is(judged.feeFrom, 'split');
});

test('nothing delivered gives each party its deposit share; the proposer pays', async () => {
  const judged = await new SandboxJudge().judge(input([{ note: 'trust me' }]));
  assert.equal(judged.distribution, [{ party: seller, bp: 0 }, { party: buyer, bp: 10000 }]);
  assert.is(judged.feeFrom, 'proposer');
  assert.equal((await new SandboxJudge().judge(input([]))).feeFrom, 'proposer');
});

test('when the proposal already gives the deposits back, an objection without delivery does not change it', async () => {
  const refunding = { ...input([{ note: 'n' }]), distribution: [{ party: seller!, bp: 0 }, { party: buyer!, bp: 10000 }] };
  assert.is((await new SandboxJudge().judge(refunding)).feeFrom, 'objector');
});

test('refund shares sum to 10000 whatever the deposits, a zero pot included', () => {
  for (const deposits of [['1', '2'], ['0', '0'], ['333', '333'], ['7', '1000000000007']]) {
    const shares = refundShares(input([], deposits));
    assert.is(sharesProblem(shares), undefined, JSON.stringify({ deposits, shares }));
  }
  assert.equal(refundShares(input([], ['1', '2'])), [{ party: seller, bp: 3334 }, { party: buyer, bp: 6666 }]);
});

test('half way sums to 10000 with odd shares and parties on one side only', () => {
  const shares = halfWay([{ party: seller!, bp: 3333 }, { party: buyer!, bp: 6667 }], [{ party: third!, bp: 10000 }]);
  assert.is(sharesProblem(shares), undefined);
  assert.is(shares.length, 3);
});

test('the stub answers its verdict, the proposal’s distribution by default, or fails when told to', async () => {
  const proposal = await new StubJudge({ feeFrom: 'objector' }).judge(input([]));
  assert.equal(proposal.distribution, [{ party: seller, bp: 10000 }]);
  const given = await new StubJudge({ feeFrom: 'split', distribution: [{ party: buyer!, bp: 10000 }], reason: 'r' }).judge(input([]));
  assert.equal(given, { distribution: [{ party: buyer, bp: 10000 }], feeFrom: 'split', reason: 'r' });
  try {
    await new StubJudge({ fail: true }).judge(input([]));
    assert.unreachable('the stub was set to fail');
  } catch (error) {
    assert.instance(error, EvaluatorFailure);
  }
});

test.run();
