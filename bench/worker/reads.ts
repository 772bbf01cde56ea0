import { send, withPool } from './http.js';
import type { Job, Measured } from '../jobs.js';
import { measure } from './recorder.js';

/** GETs (or POSTs) the paths round-robin for `seconds`, `concurrency` requests in flight on as many keep-alive connections. */
export function prepareReads(job: Extract<Job, { kind: 'reads' }>): () => Promise<Measured> {
  const requests = job.paths.map((path, i) => ({ route: job.route, path, expect: 200, ...(job.bodies ? { body: job.bodies[i]! } : {}) }));
  return () =>
    withPool(job.url, job.concurrency, (pool) =>
      measure(async (recorder) => {
        const end = performance.now() + job.seconds * 1000;
        let next = 0;
        const lane = async () => {
          while (performance.now() < end) await send(pool, requests[next++ % requests.length]!, recorder);
        };
        await Promise.all(Array.from({ length: job.concurrency }, lane));
      }),
    );
}
