import { parentPort } from 'node:worker_threads';
import { decodedKeyOf } from './party.js';
import type { BatchAnswer, Check } from './verify-pool.js';
import { verifyBytes } from './verify.js';

/** A VerifyPool worker: answers each batch of checks with one boolean per check, in order, and the keys it was asked to decode. */
parentPort!.on('message', ({ id, checks }: { id: number; checks: Check[] }) => {
  const answer: BatchAnswer = {
    id,
    results: checks.map((c) => verifyBytes(c.signer, c.digest, c.sig)),
    decoded: checks.flatMap((c) => (c.decode ?? []).map(decodedKeyOf)),
  };
  parentPort!.postMessage(answer);
});
