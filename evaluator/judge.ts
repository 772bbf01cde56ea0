import type { PartyId } from '../protocol/party.js';
import type { FeeFrom, Pact, Share } from '../machines/pact/types.js';

/** How the evaluator decides: a configured verdict, an offline rule, or a model behind one of two APIs. */
export const EVALUATOR_MODES = ['stub', 'sandbox', 'openai', 'anthropic'] as const;
export type EvaluatorMode = (typeof EVALUATOR_MODES)[number];

/**
 * One evidence item as the evaluator saw it: a blob with its size and its first bytes (as many as the judge's
 * `evidenceBytes` allow), or the item as proposed.
 */
export type EvidenceSeen =
  | { blob: string; note?: string; size: number; bytes: Uint8Array }
  | { url: string }
  | { note: string };

/**
 * What a dispute is judged on, frozen when the proposal was made (`inputHash` covers terms, proposer,
 * evidence and distribution) plus the objection that opened the dispute.
 */
export interface FrozenInput {
  pactId: string;
  /** The model and prompt the pact was promised at creation: a model judge uses these, not its own. */
  policy: { model: string; promptVersion: string };
  inputHash: string;
  terms: Pact['terms'];
  proposer: PartyId;
  /** The funded parties, the only ones a distribution may name, with what each paid in (minor units). */
  parties: { party: PartyId; deposit: string; bond: string }[];
  asset: string;
  /** The sum of the funded deposits, the amount a distribution splits. */
  pot: string;
  distribution: Share[];
  evidence: EvidenceSeen[];
  objection: { by: PartyId; reason: string };
}

/** A decision, before the evaluator signs it into a verdict. */
export interface Judgement {
  distribution: Share[];
  feeFrom: FeeFrom;
  reason: string;
}

/** How much of the evidence blobs a judge reads: at most `perBlob` bytes of each, `total` of all. */
export interface EvidenceBudget {
  perBlob: number;
  total: number;
}

export interface Judge {
  readonly mode: EvaluatorMode;
  /** What it reads of the blobs (a judge that reads none still has each one linked, so each is shown to exist). */
  readonly evidenceBytes: EvidenceBudget;
  /** The judgement, or a thrown `EvaluatorFailure` (refused, invalid, late, unreachable). Honors `signal`. */
  judge(input: FrozenInput, signal: AbortSignal): Promise<Judgement>;
}

/** The evaluator could not judge: the dispute then ends by `onFailure` at `verdictBy`. */
export class EvaluatorFailure extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'EvaluatorFailure';
  }
}
