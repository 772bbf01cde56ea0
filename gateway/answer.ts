import type { FastifyReply } from 'fastify';
import type { CommandReply } from '../actors/messages.js';
import type { Projector } from '../projection/projector.js';
import { bodyOf } from '../projection/response-cache.js';
import { sendError } from './errors.js';

export const JSON_TYPE = 'application/json; charset=utf-8';
/** How long an answer waits for this node's read model to show the write (then it answers anyway). */
export const READ_YOUR_WRITES_WAIT_MS = 5_000;

export type Answer = (reply: FastifyReply, result: CommandReply) => Promise<FastifyReply>;

/**
 * How a pact command's reply is answered: `{ pact }`, or the error. A local write is in this node's read
 * model from the moment it is answered; a write another host answered (no text: it came over NATS) is
 * waited for, so that the caller's next read here sees it.
 */
export function answerWith(projector: Projector): Answer {
  return async (reply, result) => {
    if (result.headers) reply.headers(result.headers);
    if (!result.ok) return sendError(reply, result.error);
    if (result.text !== undefined) return reply.type(JSON_TYPE).send(bodyOf(result.text));
    await projector.reached(result.seq, READ_YOUR_WRITES_WAIT_MS);
    return reply.type(JSON_TYPE).send(bodyOf(JSON.stringify(result.pact)));
  };
}
