import { statfs } from 'node:fs/promises';
import { pactError, type PactError } from '../protocol/errors.js';

/**
 * Whether an upload may start: at most `uploadsAtOnce` are received at the same time (each holds a socket
 * and a temporary file), and each must leave `minFreeBytes` free on the store's disk. Creating a pact costs
 * nothing, so these, not per-pact limits, bound what strangers can put on the disk at once.
 */
export class UploadRoom {
  private receiving = 0;

  constructor(
    private readonly dir: string,
    private readonly limits: { uploadsAtOnce: number; minFreeBytes: number },
  ) {}

  /** A place for an upload of up to `bytes`: `release` it when done. Or why there is none now. */
  async claim(bytes: number): Promise<{ release: () => void } | { refused: PactError }> {
    if (this.receiving >= this.limits.uploadsAtOnce) return { refused: pactError('rate_limited', 'too many uploads at once; retry in a second') };
    this.receiving++;
    let released = false;
    const release = () => {
      if (!released) this.receiving--;
      released = true;
    };
    const disk = await statfs(this.dir).catch(() => undefined);
    if (disk && disk.bavail * disk.bsize - bytes < this.limits.minFreeBytes) {
      release();
      return { refused: pactError('unavailable', 'the blob store is nearly full; retry later') };
    }
    return { release };
  }
}
