import { isUtf8 } from 'node:buffer';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { EvaluatorFailure, type EvidenceBudget, type FrozenInput } from './judge.js';

/** The most of one blob's text a model reads, and of all blobs together. */
export const BLOB_TEXT_BYTES = 64 * 1024;
export const ALL_BLOB_TEXT_BYTES = 256 * 1024;
/** What a model judge reads of the blobs: no more than it shows the model. */
export const MODEL_EVIDENCE: EvidenceBudget = { perBlob: BLOB_TEXT_BYTES, total: ALL_BLOB_TEXT_BYTES };
const PROMPT_VERSION = /^[a-z0-9][a-z0-9.-]{0,63}$/;

const prompts = new Map<string, string>();

/** The system prompt of `promptVersion`: `evaluator/prompts/<version>.md`. Throws when there is none. */
export function promptOf(promptVersion: string): string {
  const known = prompts.get(promptVersion);
  if (known !== undefined) return known;
  const file = join(import.meta.dirname, 'prompts', `${promptVersion}.md`);
  if (!PROMPT_VERSION.test(promptVersion) || !existsSync(file)) {
    throw new Error(`no evaluator prompt for promptVersion "${promptVersion}" (evaluator/prompts/<version>.md)`);
  }
  const prompt = readFileSync(file, 'utf8');
  prompts.set(promptVersion, prompt);
  return prompt;
}

/** The prompt a pact was promised; a pact pinned to a version this build lacks cannot be judged here. */
export function pinnedPrompt(promptVersion: string): string {
  try {
    return promptOf(promptVersion);
  } catch (error) {
    throw new EvaluatorFailure((error as Error).message);
  }
}

/** The frozen input as one JSON text for the model: blobs as text within the budgets, binary ones by size. */
export function renderInput(input: FrozenInput): string {
  let budget = ALL_BLOB_TEXT_BYTES;
  const evidence = input.evidence.map((item) => {
    if (!('blob' in item)) return item;
    const shown = { blob: item.blob, ...(item.note === undefined ? {} : { note: item.note }), size: item.size };
    if (!isUtf8(textPrefix(item.bytes))) return { ...shown, binary: true };
    if (budget <= 0) return { ...shown, omitted: 'input budget' };
    const text = textPrefix(item.bytes.subarray(0, Math.min(BLOB_TEXT_BYTES, budget)));
    budget -= text.length;
    return { ...shown, text: Buffer.from(text).toString('utf8'), ...(text.length < item.size ? { truncated: true } : {}) };
  });
  return JSON.stringify(
    {
      pactId: input.pactId,
      asset: input.asset,
      pot: input.pot,
      parties: input.parties,
      proposer: input.proposer,
      terms: input.terms,
      proposedDistribution: input.distribution,
      evidence,
      objection: input.objection,
    },
    null,
    2,
  );
}

/** `bytes` without a UTF-8 sequence cut at its end (a cut would make valid text look binary). */
function textPrefix(bytes: Uint8Array): Uint8Array {
  for (let end = bytes.length, back = 0; back < 4 && end > 0; back++, end--) {
    if (isUtf8(bytes.subarray(0, end))) return bytes.subarray(0, end);
  }
  return bytes;
}
