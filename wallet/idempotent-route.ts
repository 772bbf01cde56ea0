import type { FastifyReply, FastifyRequest } from 'fastify';
import { walletError } from './errors.js';
import type { IdempotencyStore } from './idempotency.js';
import { sendWalletError } from './reply.js';

export const IDEMPOTENCY_KEY = { type: 'string', minLength: 1, maxLength: 255 } as const;

/** The answer a route's work produced: its status and body. */
export interface Answered {
  status: number;
  body: unknown;
}

/**
 * Runs `work` under the request's `Idempotency-Key` (when it has one) in `scope`: the first response is stored
 * and a retry with the same body gets it again (`Idempotent-Replayed: true`); another body is 422
 * `idempotency_key_reused`; one still at work 409 `idempotency_in_progress`.
 */
export async function idempotently(store: IdempotencyStore, scope: string, request: FastifyRequest, reply: FastifyReply, work: () => Promise<Answered>): Promise<FastifyReply> {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return send(reply, await work());
  if (typeof key !== 'string' || key.length === 0 || key.length > 255) {
    return sendWalletError(reply, walletError('invalid_request', 'Idempotency-Key is 1 to 255 characters', { field: 'Idempotency-Key' }));
  }
  const started = await store.start(scope, key, request.body);
  if ('refusal' in started) {
    const message = started.refusal === 'idempotency_key_reused' ? 'this Idempotency-Key was used with another body' : 'a request with this Idempotency-Key is still at work; retry shortly';
    return sendWalletError(reply, walletError(started.refusal, message));
  }
  if ('replay' in started) return send(reply.header('idempotent-replayed', 'true'), started.replay);
  let answered: Answered;
  try {
    answered = await work();
  } catch (error) {
    await started.begun.abandon().catch(() => undefined);
    throw error;
  }
  await started.begun.finish(answered.status, answered.body);
  return send(reply, answered);
}

const send = (reply: FastifyReply, { status, body }: Answered) => reply.code(status).send(body);
