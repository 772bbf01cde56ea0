import { EvaluatorFailure } from '../judge.js';

/** The most of a model API's answer read; a server that sends more is failing. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/**
 * POSTs `body` as JSON to a model API and returns its JSON answer. Every way this can go wrong (network,
 * abort, status, size, not JSON) is an EvaluatorFailure whose message names the API and the status, never
 * the request's headers (they hold the API key).
 */
export async function postJson(api: string, url: string, headers: Record<string, string>, body: unknown, signal: AbortSignal): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(url, { method: 'POST', headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(body), signal });
  } catch (error) {
    throw new EvaluatorFailure(`${api}: ${signal.aborted ? 'no answer within the time-out' : `request failed (${errorName(error)})`}`);
  }
  const text = await readCapped(api, response, signal);
  if (!response.ok) throw new EvaluatorFailure(`${api}: status ${response.status}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new EvaluatorFailure(`${api}: the answer (status ${response.status}) is not JSON`);
  }
}

async function readCapped(api: string, response: Response, signal: AbortSignal): Promise<string> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of response.body ?? []) {
      size += chunk.length;
      if (size > MAX_ANSWER_BYTES) throw new EvaluatorFailure(`${api}: the answer is larger than ${MAX_ANSWER_BYTES} bytes`);
      chunks.push(chunk);
    }
  } catch (error) {
    await response.body?.cancel().catch(() => undefined);
    if (error instanceof EvaluatorFailure) throw error;
    throw new EvaluatorFailure(`${api}: ${signal.aborted ? 'no answer within the time-out' : `the answer broke off (${errorName(error)})`}`);
  }
  return Buffer.concat(chunks).toString('utf8');
}

const errorName = (error: unknown) => (error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.name) : 'unknown');
