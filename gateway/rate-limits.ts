import { createHash, timingSafeEqual } from 'node:crypto';
import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance } from 'fastify';

/** Requests per minute per client IP and route, by kind of route; 0 turns a kind off (README, Configuration). */
export interface RateLimits {
  writes: number;
  pokes: number;
  lists: number;
}
export type RateLimited = keyof RateLimits;

const WINDOW = '1 minute';
/** The header that carries a node's internal token on its own requests to itself. */
export const INTERNAL_HEADER = 'x-pact-internal';

/**
 * Per-IP limits on the routes that cost the service work: signed writes, pokes, list reads. Above the
 * limit a client gets 429 `rate_limited` with `Retry-After` and changes nothing.
 */
export async function registerRateLimits(app: FastifyInstance, internalToken: string | undefined): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    // The node's own evaluator reads the node over HTTP; its token (random, per process) spares it the limits.
    allowList: (request) => internalToken !== undefined && sameSecret(request.headers[INTERNAL_HEADER], internalToken),
    errorResponseBuilder: (_request, context) => ({
      statusCode: 429,
      error: 'rate_limited',
      message: `more than ${context.max} requests a minute from this address; retry in ${context.after}`,
    }),
  });
}

/** Compares a header with a secret in constant time (of their digests, so the length tells nothing either). */
function sameSecret(given: string | string[] | undefined, secret: string): boolean {
  const digest = (text: string) => createHash('sha256').update(text).digest();
  return typeof given === 'string' && timingSafeEqual(digest(given), digest(secret));
}

/** The route option that applies the limit of `kind`, or none when it is off. */
export function limitFor(limits: RateLimits, kind: RateLimited): { config?: { rateLimit: { max: number; timeWindow: string } } } {
  return limits[kind] > 0 ? { config: { rateLimit: { max: limits[kind], timeWindow: WINDOW } } } : {};
}
