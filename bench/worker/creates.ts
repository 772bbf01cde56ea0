import type { Pool } from 'undici';
import { inFlight, send, withPool } from './http.js';
import type { Job, Measured } from '../jobs.js';
import { plannedPact, type PlannedPact } from './presign.js';
import { Recorder } from './recorder.js';

/** Pacts the `creates` jobs created, kept (with their keys) for the `cold` job. */
export const storedPacts: PlannedPact[] = [];

/** Creates are signed this many at a time, just before they are sent, so that none is older than the server accepts. */
const SIGNING_BATCH = 5_000;

/** Creates `count` pacts, `concurrency` in flight; the time reported is the sending, without the signing between batches. */
export function prepareCreates(job: Extract<Job, { kind: 'creates' }>): () => Promise<Measured> {
  return () =>
    withPool(job.url, job.concurrency, async (pool) => {
      const recorder = new Recorder();
      let sendingMs = 0;
      for (let done = 0; done < job.count; done += SIGNING_BATCH) {
        const batch = Array.from({ length: Math.min(SIGNING_BATCH, job.count - done) }, (_, i) => plannedPact(`stored pact ${done + i}`));
        const start = performance.now();
        await inFlight(batch, job.concurrency, (pact) => createOne(pool, pact, recorder));
        sendingMs += performance.now() - start;
      }
      return recorder.measured(sendingMs);
    });
}

async function createOne(pool: Pool, pact: PlannedPact, recorder: Recorder): Promise<void> {
  if ((await send(pool, pact.create, recorder)) === undefined) return;
  storedPacts.push(pact);
  recorder.ids.push(pact.id);
}
