import { send, withPool } from './http.js';
import type { Job, Measured } from '../jobs.js';
import { bothFunds } from './presign.js';
import { measure } from './recorder.js';
import { storedPacts } from './creates.js';

const COLD_ROUTE = 'fund, passivated pact';
const WARM_ROUTE = 'fund, live pact';

/**
 * Picks `count` random stored pacts and signs, for each, the seller's fund (which must activate the
 * passivated actor) and the buyer's (which finds it live). The run sends them one at a time, pact by pact.
 */
export function prepareCold(job: Extract<Job, { kind: 'cold' }>): () => Promise<Measured> {
  const requests = randomSample(storedPacts, job.count).flatMap((pact) => bothFunds(pact, [COLD_ROUTE, WARM_ROUTE]));
  return () =>
    withPool(job.url, 1, (pool) =>
      measure(async (recorder) => {
        for (const request of requests) await send(pool, request, recorder);
      }),
    );
}

/** `count` distinct items of `items` in random order (a partial Fisher–Yates shuffle of a copy). */
function randomSample<T>(items: readonly T[], count: number): T[] {
  const copy = [...items];
  const n = Math.min(count, copy.length);
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(Math.random() * (copy.length - i));
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy.slice(0, n);
}
