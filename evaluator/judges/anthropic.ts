import { EvaluatorFailure, type FrozenInput, type Judge, type Judgement } from '../judge.js';
import { JUDGEMENT_SCHEMA, judgementOf } from '../judgement.js';
import { MODEL_EVIDENCE, pinnedPrompt, renderInput } from '../model-input.js';
import type { ModelSettings } from './model-settings.js';
import { postJson } from './post-json.js';

const TOOL = 'submit_verdict';

interface MessagesAnswer {
  stop_reason?: string;
  content?: { type?: string; name?: string; input?: unknown }[];
}

/** The Anthropic Messages API, made to answer through one tool whose input is the verdict. */
export class AnthropicJudge implements Judge {
  readonly mode = 'anthropic' as const;
  readonly evidenceBytes = MODEL_EVIDENCE;

  constructor(private readonly settings: ModelSettings) {}

  async judge(input: FrozenInput, signal: AbortSignal): Promise<Judgement> {
    const { url, apiKey } = this.settings;
    const { model, promptVersion } = input.policy;
    const answer = (await postJson('anthropic', `${url}/v1/messages`, { 'x-api-key': apiKey, 'anthropic-version': '2023-06-01' }, {
      model,
      max_tokens: 2_048,
      temperature: 0,
      system: pinnedPrompt(promptVersion),
      messages: [{ role: 'user', content: renderInput(input) }],
      tools: [{ name: TOOL, description: 'Submit the verdict of this dispute.', input_schema: JUDGEMENT_SCHEMA }],
      tool_choice: { type: 'tool', name: TOOL },
    }, signal)) as MessagesAnswer;
    if (answer?.stop_reason === 'refusal') throw new EvaluatorFailure('anthropic: the model refused');
    const call = Array.isArray(answer?.content) ? answer.content.find((part) => part?.type === 'tool_use' && part.name === TOOL) : undefined;
    if (!call) throw new EvaluatorFailure(`anthropic: the answer has no ${TOOL} call (${String(answer?.stop_reason)})`);
    return judgementOf(call.input, input);
  }
}
