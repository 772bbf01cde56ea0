import type { FastifyReply } from 'fastify';
import { statusOfWalletError, type WalletError } from './errors.js';

export function sendWalletError(reply: FastifyReply, error: WalletError): FastifyReply {
  const status = statusOfWalletError(error);
  if (status >= 500) console.error(`wallet ${status} ${error.error} ${reply.request.method} ${reply.request.url.split('?')[0]}: ${error.message}`);
  if (typeof error.retryAfter === 'number') reply.header('retry-after', String(error.retryAfter));
  return reply.code(status).send(error);
}
