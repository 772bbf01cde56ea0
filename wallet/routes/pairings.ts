import type { FastifyInstance } from 'fastify';
import type { WalletEvent } from '../../machines/wallet/events.js';
import type { Wallet } from '../../machines/wallet/types.js';
import type { Clock } from '../../runtime/clock.js';
import { walletError, type WalletError } from '../errors.js';
import { internalCaller, type InternalTokens } from '../internal-auth.js';
import { sendWalletError } from '../reply.js';
import { newAccessToken, sha256Hex } from '../secrets.js';
import type { TokenIndex } from '../token-index.js';
import { walletView } from '../views.js';
import type { WalletDesk } from '../wallet-desk.js';
import { pairingCodeHash } from './wallets.js';

export interface PairingRouteDeps {
  desk: WalletDesk;
  tokens: TokenIndex;
  clock: Clock;
  /** Claims per minute per IP (0: no limit). */
  claimsPerMinute: number;
  /** Callers with an internal token are not rate limited. */
  internalTokens: InternalTokens;
}

const claimBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  properties: { token: { type: 'string', minLength: 1, maxLength: 200 }, code: { type: 'string', minLength: 1, maxLength: 20 } },
} as const;

/** Whether the pairing can be claimed now: once, within its time. */
function claimable(wallet: Wallet, now: number): WalletError | undefined {
  if (wallet.pairing.claimedAt !== null || wallet.status !== 'pending_pairing') return walletError('pairing_used', 'this pairing was claimed already');
  if (now >= wallet.pairing.expiresAt) return walletError('pairing_expired', 'this pairing expired: create a new wallet');
  return undefined;
}

/**
 * `POST /v1/pairings/claim` `{ token }` or `{ code }`: the one-time exchange for the wallet's access token
 * (shown once, stored as its SHA-256); the wallet becomes active. Used: 409, expired: 410, unknown: 404.
 */
export function registerPairingRoutes(app: FastifyInstance, { desk, tokens, clock, claimsPerMinute, internalTokens }: PairingRouteDeps): void {
  const limit = claimsPerMinute > 0 ? { config: { rateLimit: { max: claimsPerMinute, timeWindow: '1 minute', allowList: internalCaller(internalTokens) } } } : {};
  app.post<{ Body: { token?: string; code?: string } }>('/v1/pairings/claim', { ...limit, schema: { operationId: 'claimPairing', body: claimBody } }, async (request, reply) => {
    const { token, code } = request.body;
    const record = await tokens.lookup(token !== undefined ? sha256Hex(token) : pairingCodeHash(code!));
    if (record?.kind !== (token !== undefined ? 'pairing' : 'pairing_code')) return sendWalletError(reply, walletError('not_found', 'no pairing has this token or code'));
    const wallet = await desk.read(record.walletId);
    const refused = wallet ? claimable(wallet, clock.now()) : walletError('not_found', 'no pairing has this token or code');
    if (refused) return sendWalletError(reply, refused);
    const accessToken = newAccessToken();
    const accessTokenHash = sha256Hex(accessToken);
    // Indexed first: a claim that then loses the race leaves an entry that opens nothing (the wallet holds the winner's hash).
    await tokens.add({ tokenHash: accessTokenHash, walletId: record.walletId, kind: 'access' });
    const outcome = await desk.change(record.walletId, (current, now): WalletEvent | WalletError =>
      claimable(current, now) ?? { type: 'paired', at: now, pairingId: current.pairing.id, accessTokenHash },
    );
    if ('error' in outcome) return sendWalletError(reply, outcome.error);
    return { wallet: walletView(outcome.wallet), accessToken, tokenType: 'Bearer' };
  });
}
