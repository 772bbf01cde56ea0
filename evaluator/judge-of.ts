import { readFileSync } from 'node:fs';
import { DEFAULT_MODEL_URLS, type EvaluatorConfig } from './config.js';
import type { Judge } from './judge.js';
import { AnthropicJudge } from './judges/anthropic.js';
import type { ModelSettings } from './judges/model-settings.js';
import { OpenAiJudge } from './judges/openai.js';
import { SandboxJudge } from './judges/sandbox.js';
import { StubJudge } from './judges/stub.js';

/** The judge of the configured mode; undefined for `none`. A model mode reads its API key file here. */
export function judgeOf(config: EvaluatorConfig): Judge | undefined {
  switch (config.mode) {
    case 'none':
      return undefined;
    case 'stub':
      return new StubJudge(config.stub);
    case 'sandbox':
      return new SandboxJudge();
    case 'openai':
    case 'anthropic': {
      if (!config.apiKeyFile) throw new Error(`the ${config.mode} evaluator needs an API key file`);
      const settings: ModelSettings = {
        url: (config.url ?? DEFAULT_MODEL_URLS[config.mode]).replace(/\/+$/, ''),
        apiKey: readFileSync(config.apiKeyFile, 'utf8').trim(),
      };
      return config.mode === 'openai' ? new OpenAiJudge(settings) : new AnthropicJudge(settings);
    }
  }
}
