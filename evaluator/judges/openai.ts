import { EvaluatorFailure, type FrozenInput, type Judge, type Judgement } from '../judge.js';
import { JUDGEMENT_SCHEMA, judgementOf } from '../judgement.js';
import { MODEL_EVIDENCE, pinnedPrompt, renderInput } from '../model-input.js';
import type { ModelSettings } from './model-settings.js';
import { postJson } from './post-json.js';

interface ChatAnswer {
  choices?: { finish_reason?: string; message?: { content?: string | null; refusal?: string | null } }[];
}

/** Any OpenAI-compatible chat-completions API, asked for a verdict in a strict JSON-schema response format. */
export class OpenAiJudge implements Judge {
  readonly mode = 'openai' as const;
  readonly evidenceBytes = MODEL_EVIDENCE;

  constructor(private readonly settings: ModelSettings) {}

  async judge(input: FrozenInput, signal: AbortSignal): Promise<Judgement> {
    const { url, apiKey } = this.settings;
    const { model, promptVersion } = input.policy;
    const answer = (await postJson('openai', `${url}/chat/completions`, { authorization: `Bearer ${apiKey}` }, {
      model,
      temperature: 0,
      messages: [{ role: 'system', content: pinnedPrompt(promptVersion) }, { role: 'user', content: renderInput(input) }],
      response_format: { type: 'json_schema', json_schema: { name: 'verdict', strict: true, schema: JUDGEMENT_SCHEMA } },
    }, signal)) as ChatAnswer;
    const choice = answer?.choices?.[0];
    if (choice?.message?.refusal) throw new EvaluatorFailure('openai: the model refused');
    if (choice?.finish_reason !== 'stop') throw new EvaluatorFailure(`openai: the answer did not finish (${String(choice?.finish_reason)})`);
    const content = choice.message?.content;
    if (typeof content !== 'string') throw new EvaluatorFailure('openai: the answer has no content');
    let verdict: unknown;
    try {
      verdict = JSON.parse(content);
    } catch {
      throw new EvaluatorFailure('openai: the content is not JSON');
    }
    return judgementOf(verdict, input);
  }
}
