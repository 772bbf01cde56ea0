import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { HttpLimits } from '../runtime/config.js';
import { PACT_ID } from '../protocol/ids.js';
import { JSON_TYPE } from './answer.js';

const PREFIX = '/pacts/';

/** A pact's `GET /pacts/:id` body when it is in memory now (ReadModel.cachedResponse). */
export type CachedResponse = (id: string) => string | undefined;

/**
 * The HTTP server, with `GET /pacts/:id` of a pact whose answer is in memory answered before Fastify routes
 * the request: the same bytes and headers as the route's own answer, at the cost of Node's HTTP alone. Any
 * other request, a path written any other way (a query, an escape) or a pact not in memory goes to `fastify`.
 */
export function serverWithCachedPactReads(limits: HttpLimits, cached: CachedResponse) {
  return (fastify: (request: IncomingMessage, response: ServerResponse) => void): Server => {
    const server = createServer((request, response) => {
      const body = request.method === 'GET' ? cachedBodyFor(request.url, cached) : undefined;
      if (body === undefined) return fastify(request, response);
      response.writeHead(200, { 'content-type': JSON_TYPE, 'content-length': Buffer.byteLength(body) });
      response.end(body);
    });
    // What Fastify sets on a server it creates itself.
    server.keepAliveTimeout = limits.keepAliveTimeoutMs;
    server.requestTimeout = limits.requestTimeoutMs;
    server.setTimeout(limits.connectionTimeoutMs);
    return server;
  };
}

function cachedBodyFor(url: string | undefined, cached: CachedResponse): string | undefined {
  if (url === undefined || !url.startsWith(PREFIX)) return undefined;
  const id = url.slice(PREFIX.length);
  return PACT_ID.test(id) ? cached(id) : undefined;
}
