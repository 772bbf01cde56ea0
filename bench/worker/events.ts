import { sign } from 'node:crypto';
import { canonicalDigest } from '../../protocol/digest.js';
import { eventIdOf } from '../../stream/event.js';
import type { Job, Measured } from '../jobs.js';
import { inFlight, send, withPool, type PreparedRequest } from './http.js';
import { newSigner, type Signer } from './presign.js';
import { Recorder } from './recorder.js';

const HOUR_MS = 3_600_000;
/** Publishers take turns so that none reaches the hourly quota (1,000 by default). */
export const EVENTS_PER_PUBLISHER = 500;

/** Publishes `count` public events (about 300 bytes each), `concurrency` in flight. */
export function prepareEvents(job: Extract<Job, { kind: 'events' }>): () => Promise<Measured> {
  const publishers = Array.from({ length: Math.ceil(job.count / EVENTS_PER_PUBLISHER) }, () => newSigner());
  const requests = Array.from({ length: job.count }, (_, i) => signedEvent(publishers[Math.floor(i / EVENTS_PER_PUBLISHER)]!, i));
  return () =>
    withPool(job.url, job.concurrency, async (pool) => {
      const recorder = new Recorder();
      const start = performance.now();
      await inFlight(requests, job.concurrency, async (request) => void (await send(pool, request, recorder)));
      return recorder.measured(performance.now() - start);
    });
}

function signedEvent(publisher: Signer, i: number): PreparedRequest {
  return { route: 'POST /v0/events', path: '/v0/events', body: JSON.stringify(benchEvent(publisher, i)), expect: 200 };
}

/** The bench's `i`th public event by `publisher`, signed with node:crypto, living an hour. */
export function benchEvent(publisher: Signer, i: number) {
  const now = Date.now();
  const unsigned = {
    v: 0 as const,
    privacy: 'public' as const,
    publisher: publisher.party,
    channel: `bench.${i % 16}`,
    kind: 'bench.tick',
    tags: ['bench'],
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + HOUR_MS).toISOString(),
    body: { i, text: 'the quick brown fox jumps over the lazy dog' },
  };
  const id = eventIdOf(unsigned);
  return { ...unsigned, id, signature: sign(null, canonicalDigest(id), publisher.privateKey).toString('hex') };
}
