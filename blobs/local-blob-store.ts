import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { BlobStore, Download, Received } from './blob-store.js';
import type { LinkTokens } from './link-tokens.js';

/**
 * Blobs on local disk, content-addressed: `<dir>/sha256/<first two hex>/<hash>`. An upload goes to
 * `<dir>/tmp` first and is renamed into place only once kept, so a reader never sees a partial file and
 * equal content is stored once. `/dl/<token>` links are relative and their tokens live in `tokens`.
 */
export class LocalBlobStore implements BlobStore {
  private constructor(
    private readonly dir: string,
    private readonly tokens: LinkTokens,
  ) {}

  /** Opens the store; uploads a crash left half-written are removed. */
  static async open(dir: string, tokens: LinkTokens): Promise<LocalBlobStore> {
    await rm(join(dir, 'tmp'), { recursive: true, force: true });
    await mkdir(join(dir, 'tmp'), { recursive: true });
    return new LocalBlobStore(dir, tokens);
  }

  async receive(body: Readable, maxBytes: number): Promise<Received | 'too_large'> {
    const temporary = join(this.dir, 'tmp', randomBytes(16).toString('hex'));
    const discard = () => rm(temporary, { force: true });
    const meter = new Meter(maxBytes);
    try {
      await pipeline(body, meter, createWriteStream(temporary, { flags: 'wx' }));
    } catch (error) {
      await discard();
      if (error instanceof TooLarge) return 'too_large';
      throw error;
    }
    const hash = meter.hash();
    return { hash, size: meter.size, keep: () => this.keep(temporary, hash), discard };
  }

  async link(hash: string, expiresAt: number): Promise<string> {
    return `/dl/${await this.tokens.issue(hash, expiresAt)}`;
  }

  /** What the link `token` gives at `now`. */
  async download(token: string, now: number): Promise<Download> {
    const issued = await this.tokens.find(token);
    if (!issued) return 'unknown';
    if (now >= issued.expiresAt) return 'expired';
    const path = this.pathOf(issued.hash);
    const found = await stat(path).catch(() => undefined);
    return found ? { path, size: found.size } : 'unknown';
  }

  private pathOf(hash: string): string {
    return join(this.dir, 'sha256', hash.slice(0, 2), hash);
  }

  /** Renames the upload into place, unless the same content (same hash) is there already. */
  private async keep(temporary: string, hash: string): Promise<void> {
    const path = this.pathOf(hash);
    if (await stat(path).then(() => true, () => false)) return rm(temporary, { force: true });
    await mkdir(join(path, '..'), { recursive: true });
    await rename(temporary, path);
  }
}

class TooLarge extends Error {}

/** Passes bytes through while hashing and counting them; more than `maxBytes` fails the stream. */
class Meter extends Transform {
  size = 0;
  private readonly hashing = createHash('sha256');

  constructor(private readonly maxBytes: number) {
    super();
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.size += chunk.length;
    if (this.size > this.maxBytes) return done(new TooLarge());
    this.hashing.update(chunk);
    done(null, chunk);
  }

  hash(): string {
    return this.hashing.digest('hex');
  }
}
