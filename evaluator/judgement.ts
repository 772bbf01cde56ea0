import { sharesAmongProblem, verdictProblem } from '../machines/pact/rules.js';
import { FEE_FROM, type FeeFrom, type Share } from '../machines/pact/types.js';
import { EvaluatorFailure, type FrozenInput, type Judgement } from './judge.js';

export const MAX_REASON_CHARS = 4_096;

/**
 * The answer a model must give, as JSON Schema: usable as an OpenAI `json_schema` response format (strict)
 * and as an Anthropic tool's `input_schema`.
 */
export const JUDGEMENT_SCHEMA = {
  type: 'object',
  additionalProperties: false,
  required: ['distribution', 'feeFrom', 'reason'],
  properties: {
    distribution: {
      type: 'array',
      description: 'Shares of the pot in basis points, naming only the listed parties; bp values sum to 10000.',
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['party', 'bp'],
        properties: { party: { type: 'string' }, bp: { type: 'integer' } },
      },
    },
    feeFrom: { type: 'string', enum: FEE_FROM, description: 'objector: proposal upheld; proposer: objection upheld; split: both partly right.' },
    reason: { type: 'string', description: 'Why, in a few sentences.' },
  },
} as const;

/** A model's answer as a judgement of `input`, or an EvaluatorFailure saying what is wrong with it. */
export function judgementOf(value: unknown, input: FrozenInput): Judgement {
  const fail = (why: string): never => {
    throw new EvaluatorFailure(`the model's verdict is invalid: ${why}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return fail('not an object');
  const { distribution, feeFrom, reason, ...extra } = value as Record<string, unknown>;
  if (Object.keys(extra).length > 0) fail(`unexpected fields ${Object.keys(extra).join(', ')}`);
  if (!FEE_FROM.includes(feeFrom as FeeFrom)) fail(`feeFrom ${JSON.stringify(feeFrom)}`);
  if (typeof reason !== 'string' || reason.length > MAX_REASON_CHARS) fail(`reason must be a string of at most ${MAX_REASON_CHARS} characters`);
  if (!Array.isArray(distribution)) return fail('distribution is not an array');
  const shares = distribution.map((share: unknown): Share => {
    const { party, bp, ...more } = (typeof share === 'object' && share !== null ? share : {}) as Record<string, unknown>;
    if (typeof party !== 'string' || typeof bp !== 'number' || Object.keys(more).length > 0) return fail('a share is not { party, bp }');
    return { party: party as Share['party'], bp };
  });
  const funded = new Set<string>(input.parties.map((p) => p.party));
  const problem = sharesAmongProblem(shares, (party) => funded.has(party)) ?? verdictProblem(input.distribution, shares, feeFrom as FeeFrom);
  if (problem) fail(problem);
  return { distribution: shares, feeFrom: feeFrom as FeeFrom, reason: reason as string };
}
