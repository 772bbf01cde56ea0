import type { FeeFrom, Share } from '../../machines/pact/types.js';
import { EvaluatorFailure, type FrozenInput, type Judge, type Judgement } from '../judge.js';

/**
 * What the stub answers: a fixed verdict (without a distribution, the proposal's), or `fail` to stand for an
 * evaluator that could not judge.
 */
export type StubVerdict = { distribution?: Share[]; feeFrom: FeeFrom; reason?: string } | { fail: true };

/** The proposal upheld: what the stub answers unless told otherwise (PACT_EVALUATOR_STUB). */
export const UPHOLD_PROPOSAL: StubVerdict = { feeFrom: 'objector' };

/** Answers the configured verdict whatever the input: for tests and for trying the flow end to end. */
export class StubJudge implements Judge {
  readonly mode = 'stub' as const;
  readonly evidenceBytes = { perBlob: 0, total: 0 };

  constructor(private readonly verdict: StubVerdict) {}

  async judge(input: FrozenInput): Promise<Judgement> {
    const verdict = this.verdict;
    if ('fail' in verdict) throw new EvaluatorFailure('the stub is set to fail');
    return {
      distribution: verdict.distribution ?? input.distribution,
      feeFrom: verdict.feeFrom,
      reason: verdict.reason ?? 'stub verdict',
    };
  }
}
