import { FEE_FROM, type Share } from '../machines/pact/types.js';
import { EVALUATOR_MODES, type EvaluatorMode } from './judge.js';
import { UPHOLD_PROPOSAL, type StubVerdict } from './judges/stub.js';
import { promptOf } from './model-input.js';

/** The evaluator's settings (README, "The evaluator"): its policy, its mode and what the mode needs. */
export interface EvaluatorConfig {
  /** PACT_EVALUATOR_MODE: how this process judges; `none` runs no evaluator role here. */
  mode: EvaluatorMode | 'none';
  /** PACT_EVALUATOR_KEY_FILE: the pinned key's seed; unset, one is made once under the data directory. */
  keyFile: string | undefined;
  /**
   * PACT_EVALUATOR_MODEL, PACT_EVALUATOR_PROMPT_VERSION, PACT_EVALUATOR_TIMEOUT_MS: pinned into every pact;
   * a model judge uses each pact's pinned model and prompt.
   */
  model: string;
  promptVersion: string;
  timeoutMs: number;
  /** PACT_EVALUATOR_ATTEMPT_MS: the longest one judgement may take; a failed one is tried again, 3 in all. */
  attemptMs: number;
  /** PACT_EVALUATOR_URL: the model API's base URL (model modes). */
  url: string | undefined;
  /** PACT_EVALUATOR_API_KEY_FILE: the file holding the model API's key (model modes). */
  apiKeyFile: string | undefined;
  /** PACT_EVALUATOR_STUB: the stub's verdict, JSON. */
  stub: StubVerdict;
  /** PACT_EVALUATOR_CONSUMER: `npm run evaluator`'s durable consumer's name; evaluators sharing it share the disputes. */
  consumer: string;
  /** PACT_EVALUATOR_SERVICE_URL: the escrow service the evaluator reads; unset, the process's own. */
  serviceUrl: string | undefined;
}

const MODEL_MODES: readonly string[] = ['openai', 'anthropic'];
export const DEFAULT_MODEL_URLS: Record<'openai' | 'anthropic', string> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

export function evaluatorConfig(env: NodeJS.ProcessEnv, times: { timeoutMs: number; attemptMs: number }): EvaluatorConfig {
  const mode = env.PACT_EVALUATOR_MODE || 'sandbox';
  if (!isMode(mode)) throw new Error(`PACT_EVALUATOR_MODE must be one of none, ${EVALUATOR_MODES.join(', ')}; got ${mode}`);
  // The model is pinned into pacts: where a model judges (here or elsewhere), the operator names it.
  if ((mode === 'none' || MODEL_MODES.includes(mode)) && !env.PACT_EVALUATOR_MODEL) {
    throw new Error(`PACT_EVALUATOR_MODE=${mode} needs PACT_EVALUATOR_MODEL (the model id pinned into pacts)`);
  }
  if (MODEL_MODES.includes(mode) && !env.PACT_EVALUATOR_API_KEY_FILE) throw new Error(`PACT_EVALUATOR_MODE=${mode} needs PACT_EVALUATOR_API_KEY_FILE`);
  const promptVersion = env.PACT_EVALUATOR_PROMPT_VERSION || 'pact-eval-1';
  promptOf(promptVersion); // a version without its prompt file is refused at start, whatever the mode
  return {
    mode,
    keyFile: env.PACT_EVALUATOR_KEY_FILE || undefined,
    model: env.PACT_EVALUATOR_MODEL || (mode === 'stub' ? 'stub' : 'sandbox'),
    promptVersion,
    ...times,
    url: env.PACT_EVALUATOR_URL || undefined,
    apiKeyFile: env.PACT_EVALUATOR_API_KEY_FILE || undefined,
    stub: env.PACT_EVALUATOR_STUB ? stubVerdict(JSON.parse(env.PACT_EVALUATOR_STUB)) : UPHOLD_PROPOSAL,
    consumer: env.PACT_EVALUATOR_CONSUMER || 'evaluator',
    serviceUrl: env.PACT_EVALUATOR_SERVICE_URL || undefined,
  };
}

const isMode = (mode: string): mode is EvaluatorConfig['mode'] => mode === 'none' || (EVALUATOR_MODES as readonly string[]).includes(mode);

/** A stub verdict: `{ "fail": true }` or `{ "feeFrom": …, "distribution"?: […], "reason"?: … }`; throws on anything else. */
export function stubVerdict(given: unknown): StubVerdict {
  const value = (typeof given === 'object' && given !== null ? given : {}) as Record<string, unknown>;
  if (value.fail === true) return { fail: true };
  const share = (s: unknown) => typeof s === 'object' && s !== null && typeof (s as Share).party === 'string' && Number.isInteger((s as Share).bp);
  const problem =
    !(FEE_FROM as readonly unknown[]).includes(value.feeFrom) ? `feeFrom must be ${FEE_FROM.join(', ')}`
    : value.distribution !== undefined && !(Array.isArray(value.distribution) && value.distribution.every(share)) ? 'distribution must be [{ party, bp }]'
    : value.reason !== undefined && typeof value.reason !== 'string' ? 'reason must be a string'
    : undefined;
  if (problem) throw new Error(`the stub verdict: ${problem}`);
  return value as StubVerdict;
}
