import { readAtMost } from '../public-network.js';
import type { ProviderTarget } from './provider-call.js';

const MAX_ANSWER_BYTES = 1_000_000;

/** How this service reaches providers: its fetch (public addresses only, unless for tests) and how long a request may take. */
export interface ProviderHttp {
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  timeoutMs: number;
}

/** A GET carries its input as query parameters (each value as text); anything else as a JSON body. */
function requestFor(target: ProviderTarget, input: unknown, headers: Record<string, string>): { url: string; init: RequestInit } {
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

/** Sends a request (no redirects followed), giving up after the time allowed; an error says why nothing came back. */
export async function send(http: ProviderHttp, target: ProviderTarget, input: unknown, headers: Record<string, string> = {}): Promise<Sent> {
  const { url, init } = requestFor(target, input, headers);
  try {
    return { ok: true, response: await http.fetch(url, { ...init, redirect: 'error', signal: AbortSignal.timeout(http.timeoutMs) }) };
  } catch (error) {
    return { ok: false, reason: `the provider could not be reached: ${String(error)}` };
  }
}

/** At most MAX_ANSWER_BYTES of a body, as text, or why not. */
export async function bodyOf(response: Response, maxBytes = MAX_ANSWER_BYTES): Promise<{ ok: true; text: string } | { ok: false; reason: string }> {
  try {
    return { ok: true, text: await readAtMost(response, maxBytes) };
  } catch (error) {
    return { ok: false, reason: `the provider's answer could not be read whole: ${String(error)}` };
  }
}

/** A 2xx answer's JSON body, or why it is not a usable answer. */
export async function answerOf(response: Response): Promise<{ ok: true; output: unknown } | { ok: false; reason: string }> {
  if (!response.ok) {
    discard(response);
    return { ok: false, reason: `the provider answered ${response.status}` };
  }
  const body = await bodyOf(response);
  if (!body.ok) return body;
  try {
    return { ok: true, output: JSON.parse(body.text) };
  } catch {
    return { ok: false, reason: 'the provider answered with something that is not JSON' };
  }
}
