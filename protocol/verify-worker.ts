import { parentPort } from 'node:worker_threads';
import type { Check } from './verify-pool.js';
import { verifyBytes } from './verify.js';

/** A VerifyPool worker: answers each batch of checks with one boolean per check, in order. */
parentPort!.on('message', ({ id, checks }: { id: number; checks: Check[] }) => {
  parentPort!.postMessage({ id, results: checks.map((c) => verifyBytes(c.signer, c.digest, c.sig)) });
});
