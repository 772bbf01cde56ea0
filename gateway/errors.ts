import type { FastifyError, FastifyInstance, FastifyReply } from 'fastify';
import { pactError, statusOf, type PactError } from '../protocol/errors.js';

export function sendError(reply: FastifyReply, error: PactError): FastifyReply {
  const status = statusOf(error);
  // Every 5xx is logged (never a body or header: they may hold signatures or payment proofs).
  if (status >= 500) console.error(`${status} ${error.error} ${reply.request.method} ${reply.request.url.split('?')[0]}: ${error.message}`);
  // A refusal that says when to come back says it in the header too.
  if (typeof error.retryAfter === 'number') reply.header('retry-after', String(error.retryAfter));
  return reply.code(status).send(error);
}

export const unknownPact = (id: string) => pactError('not_found', `no pact ${id}`);
export const badSignature = () => pactError('invalid_signature', 'the signature does not verify');

/** Every failure leaves in the one error shape `{ error, message, ...details }`. */
export function installErrorHandling(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => sendError(reply, pactError('not_found', `no route ${request.method} ${request.url}`)));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      const first = error.validation[0];
      const params = first?.params as { missingProperty?: string; additionalProperty?: string } | undefined;
      const named = params?.missingProperty ?? params?.additionalProperty;
      const field = [first?.instancePath.replace(/^\//, '').replaceAll('/', '.'), named].filter(Boolean).join('.');
      return sendError(reply, pactError('invalid_request', `${error.validationContext ?? 'body'}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`, { field: field || error.validationContext }));
    }
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') return sendError(reply, pactError('too_large', 'the body is too large'));
    if (error.statusCode === 429) return sendError(reply, pactError('rate_limited', error.message));
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
      return sendError(reply, pactError('invalid_request', error.message));
    }
    console.error(`unexpected error on ${request.method} ${request.url.split('?')[0]}:`, error.stack ?? String(error));
    return sendError(reply, pactError('internal_error', 'something went wrong on our side'));
  });
}
