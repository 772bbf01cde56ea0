import type { ProviderTarget } from './provider-call.js';

const MAX_ANSWER_CHARS = 1_000_000;

/** A GET carries its input as query parameters (each value as text); anything else as a JSON body. */
export function requestFor(target: ProviderTarget, input: unknown, headers: Record<string, string> = {}): { url: string; init: RequestInit } {
  if (target.method === 'GET') {
    const url = new URL(target.resource);
    for (const [name, value] of Object.entries((input ?? {}) as Record<string, unknown>)) url.searchParams.set(name, typeof value === 'string' ? value : JSON.stringify(value));
    return { url: url.href, init: { method: 'GET', headers } };
  }
  return { url: target.resource, init: { method: target.method, headers: { ...headers, 'content-type': 'application/json' }, body: JSON.stringify(input) } };
}

/** Lets go of an answer's body unread: never waited for (a provider may never finish sending it). */
export function discard(response: Response): void {
  response.body?.cancel().catch(() => undefined);
}

export type Sent = { ok: true; response: Response } | { ok: false; reason: string };

/** Sends a request, giving up after `timeoutMs`; an error says why nothing (or nothing whole) came back. */
export async function send(target: ProviderTarget, input: unknown, timeoutMs: number, headers?: Record<string, string>): Promise<Sent> {
  const { url, init } = requestFor(target, input, headers);
  try {
    return { ok: true, response: await fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(timeoutMs) }) };
  } catch (error) {
    return { ok: false, reason: `the provider could not be reached: ${String(error)}` };
  }
}

/** A 2xx answer's JSON body, or why it is not a usable answer. */
export async function answerOf(response: Response): Promise<{ ok: true; output: unknown } | { ok: false; reason: string }> {
  if (!response.ok) {
    discard(response);
    return { ok: false, reason: `the provider answered ${response.status}` };
  }
  let text: string;
  try {
    text = await response.text();
  } catch (error) {
    return { ok: false, reason: `the provider's answer was cut off: ${String(error)}` };
  }
  if (text.length > MAX_ANSWER_CHARS) return { ok: false, reason: `the provider's answer is over ${MAX_ANSWER_CHARS} characters` };
  try {
    return { ok: true, output: JSON.parse(text) };
  } catch {
    return { ok: false, reason: 'the provider answered with something that is not JSON' };
  }
}
