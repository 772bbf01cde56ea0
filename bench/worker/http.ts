import { Pool } from 'undici';
import type { Recorder } from './recorder.js';

/** One request, ready to send: a pre-serialized body, the route it is tallied under, the status it must get. */
export interface PreparedRequest {
  route: string;
  path: string;
  /** JSON text of a signed call; a request without one is a GET. */
  body?: string;
  headers?: Record<string, string>;
  expect: number;
}

const JSON_HEADERS = { 'content-type': 'application/json' };

/** Runs `use` with a keep-alive pool of `connections` connections to `url`, closed afterwards. */
export async function withPool<T>(url: string, connections: number, use: (pool: Pool) => Promise<T>): Promise<T> {
  const pool = new Pool(url, { connections, pipelining: 1 });
  try {
    return await use(pool);
  } finally {
    await pool.close();
  }
}

/** Sends `request`, records its latency, and resolves to the body text when the status is the expected one. */
export async function send(pool: Pool, request: PreparedRequest, recorder: Recorder): Promise<string | undefined> {
  const start = performance.now();
  try {
    const response = await pool.request({
      method: request.body === undefined ? 'GET' : 'POST',
      path: request.path,
      headers: request.body === undefined ? request.headers : { ...JSON_HEADERS, ...request.headers },
      body: request.body,
    });
    const text = await response.body.text();
    recorder.record(request.route, performance.now() - start);
    if (response.statusCode === request.expect) return text;
    recorder.fail(`${request.route}: HTTP ${response.statusCode} ${errorCode(text)}`);
  } catch (error) {
    recorder.fail(`${request.route}: threw ${error instanceof Error ? error.message : String(error)}`);
  }
  return undefined;
}

function errorCode(text: string): string {
  try {
    return (JSON.parse(text) as { error?: string }).error ?? '-';
  } catch {
    return '-';
  }
}

/** Calls `work` on every item, `concurrency` at a time, in order of the items. */
export async function inFlight<T>(items: readonly T[], concurrency: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) await work(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, lane));
}
