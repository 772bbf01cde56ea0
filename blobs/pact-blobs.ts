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

  constructor(level: JsonLevel) {
    this.uploads = level.sublevel<string, Uploaded>('pactBlobs', { valueEncoding: 'json' });
  }

  async has(pactId: string, hash: string): Promise<boolean> {
    return (await this.uploads.get(`${pactId}!${hash}`)) !== undefined;
  }

  async count(pactId: string): Promise<number> {
    let count = 0;
    for await (const _ of this.uploads.keys({ gt: `${pactId}!`, lt: `${pactId}!~` })) count++;
    return count;
  }

  async add(pactId: string, hash: string, upload: Uploaded): Promise<void> {
    await this.uploads.put(`${pactId}!${hash}`, upload);
  }
}
