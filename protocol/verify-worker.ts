import { parentPort, workerData } from 'node:worker_threads';
import { nodeSigner, type Signer } from './node-signer.js';
import { decodedKeyOf } from './party.js';
import type { KeyPair } from './sign.js';
import type { BatchAnswer, Job } from './verify-pool.js';
import { verifyBytes } from './verify.js';

const signingKey = (workerData as { signingKey?: KeyPair }).signingKey;
const signer: Signer | undefined = signingKey ? nodeSigner(signingKey) : undefined;

function result(job: Job): boolean | string {
  if ('check' in job) return verifyBytes(job.check.signer, job.check.digest, job.check.sig);
  if (!signer) throw new Error('this worker was given no key to sign with');
  return signer.sign(job.sign);
}

/** A VerifyPool worker: answers each batch with one result per job, in order, and the keys it was asked to decode. */
parentPort!.on('message', ({ id, jobs }: { id: number; jobs: Job[] }) => {
  const results = jobs.map(result);
  // Only for a call whose signature holds: a forged create must not buy curve decodings with one check.
  const decoded = jobs.flatMap((job, i) => ('check' in job && results[i] === true ? (job.check.decode ?? []).map(decodedKeyOf) : []));
  const answer: BatchAnswer = { id, results, decoded };
  parentPort!.postMessage(answer);
});
