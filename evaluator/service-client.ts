import { createHash } from 'node:crypto';
import type { Pact } from '../machines/pact/types.js';
import { signPayload, type KeyPair } from '../protocol/sign.js';
import type { Clock } from '../runtime/clock.js';

/** What the evaluator keeps of one blob: its size and its first bytes. */
export interface BlobRead {
  size: number;
  head: Uint8Array;
}

const LIST_PAGE = 200;

/** The service could not be read: the evaluation is tried again later (not an evaluator failure). */
export class ServiceUnavailable extends Error {}

/**
 * The evaluator reads the escrow service as any agent does, over its public HTTP API: pacts, the list of
 * disputes, and evidence through links it signs for as the pinned evaluator. `headers` go with every
 * request (a node's own evaluator sends the token that spares it the node's rate limits).
 */
export class ServiceClient {
  constructor(
    /** The service's base URL (a function: a node knows its own only once it listens). */
    private readonly base: () => string,
    private readonly key: KeyPair,
    private readonly clock: Clock,
    private readonly headers: Record<string, string> = {},
  ) {}

  async pact(id: string): Promise<Pact | undefined> {
    const response = await this.fetch(`/pacts/${id}`);
    if (response.status === 404) return undefined;
    return ((await this.json(response)) as { pact: Pact }).pact;
  }

  /** The ids of every pact in DISPUTED. */
  async *disputed(): AsyncIterable<string> {
    let since = 0;
    for (;;) {
      const page = (await this.json(await this.fetch(`/pacts?state=DISPUTED&limit=${LIST_PAGE}&since=${since}`))) as {
        pacts: { id: string }[];
        nextSince: number | null;
      };
      for (const pact of page.pacts) yield pact.id;
      if (page.nextSince === null) return;
      since = page.nextSince;
    }
  }

  /**
   * A blob of the pact, by a link the evaluator signs for: its size and at most `maxBytes` of its start. A
   * blob read whole must hash to `hash`.
   */
  async blob(pactId: string, hash: string, maxBytes: number): Promise<BlobRead> {
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
    const read = await readHead(download.body, maxBytes);
    const size = Number(download.headers.get('content-length') ?? read.head.length);
    if (read.whole && createHash('sha256').update(read.head).digest('hex') !== hash) {
      throw new ServiceUnavailable(`blob ${hash} came back with other bytes`);
    }
    return { size: read.whole ? read.head.length : size, head: read.head };
  }

  private async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    try {
      return await fetch(new URL(path, this.base()), { ...init, headers: { ...this.headers, ...(init.headers as Record<string, string>) } });
    } catch (error) {
      throw new ServiceUnavailable(`${path}: ${String(error)}`);
    }
  }

  private async json(response: Response): Promise<unknown> {
    if (!response.ok) throw new ServiceUnavailable(`${response.url} answered ${response.status}: ${(await response.text()).slice(0, 200)}`);
    return response.json();
  }
}

/** The first `maxBytes` of a body, and whether that is all of it; the rest is not downloaded. */
async function readHead(body: ReadableStream<Uint8Array>, maxBytes: number): Promise<{ head: Uint8Array; whole: boolean }> {
  const head = new Uint8Array(maxBytes);
  let size = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { head: head.slice(0, size), whole: true };
    if (size + value.length > maxBytes) {
      head.set(value.subarray(0, maxBytes - size), size);
      await reader.cancel();
      return { head, whole: false };
    }
    head.set(value, size);
    size += value.length;
  }
}
