import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { walletError } from './errors.js';
import { sendWalletError } from './reply.js';
import { sha256Hex } from './secrets.js';

/**
 * The internal routes' guard: `Authorization: Bearer <WALLET_INTERNAL_TOKEN>`, compared in constant time (of
 * the hashes, so lengths tell nothing). Unset on the server: every internal route answers 503 (fail closed).
 */
export function internalOnly(token: string | undefined) {
  const expected = token === undefined ? undefined : Buffer.from(sha256Hex(token), 'hex');
  return async (request: FastifyRequest, reply: FastifyReply) => {
    if (!expected) return sendWalletError(reply, walletError('unavailable', 'the internal routes are off: WALLET_INTERNAL_TOKEN is not set'));
    const given = /^bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1];
    if (!given || !timingSafeEqual(Buffer.from(sha256Hex(given), 'hex'), expected)) return sendWalletError(reply, walletError('unauthorized', 'the internal routes need Authorization: Bearer <WALLET_INTERNAL_TOKEN>'));
  };
}
