import { randomBytes } from 'node:crypto';
import type { JsonLevel } from '../storage/level.js';

interface Issued {
  hash: string;
  expiresAt: number;
}

/** How long an expired token is still known (answered 410, not 404) before the sweep forgets it. */
const REMEMBER_EXPIRED_MS = 24 * 3_600_000;

/** Download link tokens: 32 random bytes, base64url, kept in LevelDB so that they survive a restart. */
export class LinkTokens {
  private readonly tokens;

  constructor(level: JsonLevel) {
    this.tokens = level.sublevel<string, Issued>('linkTokens', { valueEncoding: 'json' });
  }

  async issue(hash: string, expiresAt: number): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.tokens.put(token, { hash, expiresAt });
    return token;
  }

  async find(token: string): Promise<Issued | undefined> {
    return this.tokens.get(token);
  }

  /** Forgets tokens that expired more than a day before `now`. */
  async sweep(now: number): Promise<void> {
    const forgotten: string[] = [];
    for await (const [token, issued] of this.tokens.iterator()) {
      if (issued.expiresAt + REMEMBER_EXPIRED_MS < now) forgotten.push(token);
    }
    await this.tokens.batch(forgotten.map((key) => ({ type: 'del' as const, key })));
  }
}
