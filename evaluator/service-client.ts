import { createHash } from 'node:crypto';
import type { Pact } from '../machines/pact/types.js';
import { signPayload, type KeyPair } from '../protocol/sign.js';
import type { Clock } from '../runtime/clock.js';

/** What the evaluator keeps of one blob: its size and its first bytes (a model reads no more than that). */
export interface BlobRead {
  size: number;
  head: Uint8Array;
}

/** The part of a blob the evaluator keeps in memory; the rest is only hashed on its way past. */
export const BLOB_HEAD_BYTES = 256 * 1024;
const LIST_PAGE = 200;

/** The service could not be read: the evaluation is tried again later (not an evaluator failure). */
export class ServiceUnavailable extends Error {}

/**
 * The evaluator reads the escrow service as any agent does, over its public HTTP API: pacts, the list of
 * disputes, and evidence through links it signs for as the pinned evaluator.
 */
export class ServiceClient {
  constructor(
    /** The service's base URL (a function: a node knows its own only once it listens). */
    private readonly base: () => string,
    private readonly key: KeyPair,
    private readonly clock: Clock,
  ) {}

  async pact(id: string): Promise<Pact | undefined> {
    const response = await this.fetch(`/pacts/${id}`);
    if (response.status === 404) return undefined;
    return ((await this.json(response)) as { pact: Pact }).pact;
  }

  /** The ids of every pact in DISPUTED, oldest update first. */
  async *disputed(): AsyncIterable<string> {
    let since = 0;
    for (;;) {
      const page = (await this.json(await this.fetch(`/pacts?state=DISPUTED&limit=${LIST_PAGE}&since=${since}`))) as {
        pacts: { id: string }[];
        nextSince: number | null;
      };
      for (const pact of page.pacts) yield pact.id;
      if (page.nextSince === null || page.pacts.length < LIST_PAGE) return;
      since = page.nextSince;
    }
  }

  /** A blob of the pact, by a link the evaluator signs for; bytes that do not hash to `hash` are refused. */
  async blob(pactId: string, hash: string): Promise<BlobRead> {
    const issuedAt = this.clock.now();
    const sig = signPayload({ action: 'link', pactId, hash, issuedAt }, this.key);
    const linked = await this.fetch(`/pacts/${pactId}/blobs/${hash}/link`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ signer: this.key.party, issuedAt, sig }),
    });
    const { url } = (await this.json(linked)) as { url: string };
    const download = await fetch(new URL(url, this.base())).catch((error: unknown) => {
      throw new ServiceUnavailable(`downloading blob ${hash} failed: ${String(error)}`);
    });
    if (!download.ok || !download.body) throw new ServiceUnavailable(`downloading blob ${hash} answered ${download.status}`);
    return readVerified(download.body, hash);
  }

  private async fetch(path: string, init?: RequestInit): Promise<Response> {
    try {
      return await fetch(new URL(path, this.base()), init);
    } catch (error) {
      throw new ServiceUnavailable(`${path}: ${String(error)}`);
    }
  }

  private async json(response: Response): Promise<unknown> {
    if (!response.ok) throw new ServiceUnavailable(`${response.url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    return response.json();
  }
}

/** Hashes the whole stream, keeps its first BLOB_HEAD_BYTES. */
async function readVerified(body: ReadableStream<Uint8Array>, hash: string): Promise<BlobRead> {
  const hashing = createHash('sha256');
  const head = new Uint8Array(BLOB_HEAD_BYTES);
  let size = 0;
  for await (const chunk of body) {
    hashing.update(chunk);
    if (size < BLOB_HEAD_BYTES) head.set(chunk.subarray(0, BLOB_HEAD_BYTES - size), size);
    size += chunk.length;
  }
  if (hashing.digest('hex') !== hash) throw new ServiceUnavailable(`blob ${hash} came back with other bytes`);
  return { size, head: head.slice(0, Math.min(size, BLOB_HEAD_BYTES)) };
}
