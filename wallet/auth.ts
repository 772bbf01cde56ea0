import type { FastifyRequest } from 'fastify';
import type { Wallet } from '../machines/wallet/types.js';
import { walletError, type WalletError } from './errors.js';
import { sha256Hex } from './secrets.js';
import type { TokenIndex } from './token-index.js';
import type { WalletDesk } from './wallet-desk.js';

const BEARER = /^bearer\s+(wk_[A-Za-z0-9_-]{43})$/i;

/**
 * The wallet a request's `Authorization: Bearer wk_…` opens: the token's hash names the wallet in the index,
 * and the wallet must hold that hash as its access token (a claim that lost a race left an index entry that
 * opens nothing). Missing, unknown or closed: 401.
 */
export async function walletOfBearer(request: FastifyRequest, tokens: TokenIndex, desk: WalletDesk): Promise<{ wallet: Wallet } | { error: WalletError }> {
  const token = BEARER.exec(request.headers.authorization ?? '')?.[1];
  const unauthorized = { error: walletError('unauthorized', 'send the wallet access token as Authorization: Bearer wk_…') };
  if (!token) return unauthorized;
  const hash = sha256Hex(token);
  const record = await tokens.lookup(hash);
  if (record?.kind !== 'access') return unauthorized;
  const wallet = await desk.read(record.walletId);
  if (!wallet || wallet.accessTokenHash !== hash || wallet.status === 'closed') return unauthorized;
  return { wallet };
}
