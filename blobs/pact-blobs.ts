import type { JsonLevel } from '../storage/level.js';

/** How many distinct blobs one pact may hold (as many as a proposal may name). */
export const MAX_BLOBS_PER_PACT = 100;

interface Uploaded {
  size: number;
  at: number;
  by: string;
}

/**
 * Which blobs were uploaded to which pact: a proposal may name only those, and links are given only for
 * them. Keys are `<pactId>!<hash>`.
 */
export class PactBlobs {
  private readonly uploads;
  /** Per pact, the add in progress: adds to one pact count and write one at a time. */
  private readonly adding = new Map<string, Promise<unknown>>();

  constructor(level: JsonLevel) {
    this.uploads = level.sublevel<string, Uploaded>('pactBlobs', { valueEncoding: 'json' });
  }

  async has(pactId: string, hash: string): Promise<boolean> {
    return (await this.uploads.get(`${pactId}!${hash}`)) !== undefined;
  }

  /** Records the upload unless the pact already holds MAX_BLOBS_PER_PACT other blobs; false then. */
  add(pactId: string, hash: string, upload: Uploaded): Promise<boolean> {
    const added = (this.adding.get(pactId) ?? Promise.resolve()).then(async () => {
      if (!(await this.has(pactId, hash)) && (await this.count(pactId)) >= MAX_BLOBS_PER_PACT) return false;
      await this.uploads.put(`${pactId}!${hash}`, upload);
      return true;
    });
    const settled = added.catch(() => undefined);
    this.adding.set(pactId, settled);
    void settled.then(() => {
      if (this.adding.get(pactId) === settled) this.adding.delete(pactId);
    });
    return added;
  }

  private async count(pactId: string): Promise<number> {
    let count = 0;
    for await (const _ of this.uploads.keys({ gt: `${pactId}!`, lt: `${pactId}!~` })) count++;
    return count;
  }
}
