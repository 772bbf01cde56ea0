import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { AsyncSigner } from './node-signer.js';
import { learnPublicKey, type DecodedKey } from './party.js';
import type { KeyPair } from './sign.js';
import { verifyBytes } from './verify.js';

/** One Ed25519 check: `sig` (lowercase hex) over the 32-byte `digest` by the key in `signer`. */
export interface Check {
  signer: string;
  digest: Uint8Array;
  sig: string;
  /**
   * Party ids the command will need decoded (a create's parties): a worker decodes them once the signature
   * holds, and the calling thread then finds them decoded instead of doing it itself (a decoding costs about
   * as much as a check). Says nothing of the signature.
   */
  decode?: string[];
}

/** One piece of a worker's batch: a check, or a payload to sign with the node's key. */
export type Job = { check: Check } | { sign: unknown };

/** What a worker answers for a batch: per job, in order, the check's outcome or the signature; and the keys it decoded. */
export interface BatchAnswer {
  id: number;
  results: (boolean | string)[];
  decoded: DecodedKey[];
}

/** Whatever checks signatures: inline on this thread, or a pool of worker threads. */
export interface Verifier {
  verify(check: Check): Promise<boolean>;
  close(): Promise<void>;
}

/** Checks on the calling thread: what one core does when it is enough. */
export const inlineVerifier: Verifier = {
  verify: async ({ signer, digest, sig }) => verifyBytes(signer, digest, sig),
  close: async () => undefined,
};

/** A check that could not be made: its worker stopped. Says nothing of the signature. */
export class VerifierStopped extends Error {
  constructor() {
    super('the verification worker stopped');
  }
}

const WORKER_ENTRY = fileURLToPath(new URL('./verify-worker.ts', import.meta.url));
const ESBUILD = createRequire(import.meta.url).resolve('esbuild/bin/esbuild');
let workerSource: string | undefined;

/**
 * What a worker runs: verify-worker.ts and its imports, bundled into one script once per process by the
 * esbuild command (the compiler tsx runs on; a process that exits when done, where esbuild's JS API would
 * keep a thread and a service process for good), and started after `workerData.delayMs`. A worker thread
 * does not inherit the main thread's TypeScript loader, and registering tsx in it adds a loader thread of
 * its own: some 25 MiB more RSS for one worker (docs/ARCHITECTURE.md, Memory budget). A warning fails the
 * build: it would be code that runs otherwise than its source says (an `import.meta` in a CommonJS bundle, say).
 */
function workerScript(): string {
  workerSource ??= `const { workerData } = require('node:worker_threads');\nsetTimeout(() => {\n${bundled(WORKER_ENTRY)}\n}, workerData.delayMs);`;
  return workerSource;
}

function bundled(entry: string): string {
  const args = [entry, '--bundle', '--platform=node', '--format=cjs', '--target=node20', '--log-level=warning'];
  const { error, status, stdout, stderr } = spawnSync(ESBUILD, args, { encoding: 'utf8', maxBuffer: 16 * 2 ** 20 });
  if (error || status !== 0 || stderr) throw new Error(`the verification worker could not be bundled: ${error?.message ?? stderr}`);
  return stdout;
}
const RESPAWN_DELAY_MS = 1_000;

interface Waiting {
  resolve: (result: boolean | string) => void;
  reject: (error: Error) => void;
}

/**
 * Checks on `threads` worker threads, and, given the node's key, signs there too (`signer`): the main thread
 * then neither checks nor makes an Ed25519 signature. Jobs asked for in one turn of the event loop go to
 * one worker as one message (batching keeps the messaging cheap); batches go round the workers. Each worker
 * keeps its own cache of imported keys. A worker that fails takes its batch's jobs with it (they reject: a
 * command is answered 503, nothing is applied; a notification is made again) and is replaced.
 */
export class VerifyPool implements Verifier {
  private readonly workers: Worker[];
  private readonly waiting = new Map<number, Waiting[]>();
  private batch: Job[] = [];
  private batchWaiting: Waiting[] = [];
  private batches = 0;
  private closed = false;

  constructor(
    threads: number,
    private readonly signingKey?: KeyPair,
  ) {
    this.workers = Array.from({ length: threads }, () => this.spawn());
  }

  verify(check: Check): Promise<boolean> {
    const { signer, digest, sig, decode } = check;
    return this.run({ check: { signer, digest, sig, ...(decode ? { decode } : {}) } }).then((result) => result === true);
  }

  /** Signs as `nodeSigner(signingKey)` does, on a worker. */
  get signer(): AsyncSigner {
    const key = this.signingKey;
    if (!key) throw new Error('this pool was given no key to sign with');
    return { party: key.party, sign: (payload) => this.run({ sign: payload }).then(String) };
  }

  private run(job: Job): Promise<boolean | string> {
    return new Promise((resolve, reject) => {
      this.batch.push(job);
      this.batchWaiting.push({ resolve, reject });
      if (this.batch.length === 1) setImmediate(() => this.send());
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  private send(): void {
    const id = ++this.batches;
    this.waiting.set(id, this.batchWaiting);
    this.workers[id % this.workers.length]!.postMessage({ id, jobs: this.batch });
    this.batch = [];
    this.batchWaiting = [];
  }

  private spawn(delayMs = 0): Worker {
    const worker = new Worker(workerScript(), { eval: true, workerData: { delayMs, signingKey: this.signingKey } });
    worker.on('message', ({ id, results, decoded }: BatchAnswer) => {
      for (const key of decoded) learnPublicKey(key);
      const waiting = this.waiting.get(id) ?? [];
      this.waiting.delete(id);
      waiting.forEach((w, i) => w.resolve(results[i]!));
    });
    worker.on('error', (error) => console.error('a verification worker failed:', String(error)));
    worker.on('exit', () => this.replace(worker));
    return worker;
  }

  /** Fails the batches the worker held and puts a new worker in its place. */
  private replace(gone: Worker): void {
    const index = this.workers.indexOf(gone);
    if (index < 0) return;
    for (const [id, waiting] of this.waiting) {
      if (id % this.workers.length !== index) continue;
      this.waiting.delete(id);
      for (const w of waiting) w.reject(new VerifierStopped());
    }
    if (this.closed) return;
    // A worker that cannot start at all would otherwise be replaced in a tight loop: wait a little first.
    this.workers[index] = this.spawn(RESPAWN_DELAY_MS);
  }
}
