import type { Pool } from 'undici';
import type { Pact } from '../../machines/pact/types.js';
import { inFlight, send, withPool, type PreparedRequest } from './http.js';
import type { Job, Measured } from '../jobs.js';
import { lifecycleRequests } from './presign.js';
import { measure, type Recorder } from './recorder.js';

/** Signs `count` whole lifecycles now; the returned run drives them, `concurrency` lifecycles in flight. */
export function prepareLifecycles(job: Extract<Job, { kind: 'lifecycles' }>): () => Promise<Measured> {
  const lifecycles = Array.from({ length: job.count }, lifecycleRequests);
  return () =>
    withPool(job.url, job.concurrency, (pool) =>
      measure((recorder) => inFlight(lifecycles, job.concurrency, (requests) => runLifecycle(pool, requests, recorder))),
    );
}

/** Sends the requests in order, stopping at the first unexpected answer; the last one must settle the pact. */
async function runLifecycle(pool: Pool, requests: PreparedRequest[], recorder: Recorder): Promise<void> {
  let answer: string | undefined;
  for (const request of requests) {
    answer = await send(pool, request, recorder);
    if (answer === undefined) return;
  }
  const pact = (JSON.parse(answer!) as { pact: Pact }).pact;
  if (pact.state === 'SETTLED') recorder.ids.push(pact.id);
  else recorder.fail(`cosign: 200 but state ${pact.state}`);
}
