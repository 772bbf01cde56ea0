import { timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { walletError } from './errors.js';
import { sendWalletError } from './reply.js';
import { sha256Hex } from './secrets.js';

/** Who may call the internal routes: the operator's WALLET_INTERNAL_TOKEN, and the escrow of this very process. */
export interface InternalTokens {
  /** WALLET_INTERNAL_TOKEN; unset, callers from outside get 503. */
  configured: string | undefined;
  /** A token made fresh by the process that runs both services, known only to its credit rail. */
  node: string | undefined;
}

const bearerOf = (request: FastifyRequest) => /^bearer\s+(.+)$/i.exec(request.headers.authorization ?? '')?.[1];
const hashOf = (token: string) => Buffer.from(sha256Hex(token), 'hex');
/** Compared as hashes, in constant time, so neither timing nor length tells anything. */
const matches = (given: string, expected: Buffer | undefined) => expected !== undefined && timingSafeEqual(hashOf(given), expected);

/**
 * The internal routes' guard: `Authorization: Bearer <token>`. With WALLET_INTERNAL_TOKEN unset, every caller but
 * this process's own credit rail gets 503 (fail closed); with it set, a missing or wrong token is 401.
 */
export function internalOnly({ configured, node }: InternalTokens) {
  const [expected, nodeToken] = [configured, node].map((token) => (token === undefined ? undefined : hashOf(token)));
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const given = bearerOf(request);
    if (given !== undefined && matches(given, nodeToken)) return;
    if (!expected) return sendWalletError(reply, walletError('unavailable', 'the internal routes are off: WALLET_INTERNAL_TOKEN is not set'));
    if (given === undefined || !matches(given, expected)) return sendWalletError(reply, walletError('unauthorized', 'the internal routes need Authorization: Bearer <WALLET_INTERNAL_TOKEN>'));
  };
}

/**
 * Whether a request carries one of the internal tokens: such callers (this process's escrow opening its fee wallet,
 * say) are not counted against the per-address rate limits.
 */
export function internalCaller({ configured, node }: InternalTokens): (request: FastifyRequest) => boolean {
  const hashes = [configured, node].flatMap((token) => (token === undefined ? [] : [hashOf(token)]));
  return (request) => {
    const given = bearerOf(request);
    return given !== undefined && hashes.some((hash) => matches(given, hash));
  };
}
