import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { PACT_ID } from '../protocol/ids.js';
import { JSON_TYPE } from './answer.js';

const PREFIX = '/pacts/';

/** A pact's `GET /pacts/:id` body when it is in memory now (ReadModel.cachedResponse). */
export type CachedResponse = (id: string) => Buffer | undefined;

type RequestListener = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * Has `app`'s server answer `GET /pacts/:id` of a pact whose body is in memory before Fastify routes the
 * request: the route's own status, headers and bytes, without Fastify's routing, request and reply objects.
 * Any other request, a path written any other way (a query, an escape, upper-case hex), a pact not in
 * memory, or any request once the app is closing (Fastify answers those 503) goes to Fastify. No Fastify hook runs for the reads
 * answered here: one meant for every request must be applied here too. Call before `listen`.
 */
export function answerCachedPactReads(app: FastifyInstance, cached: CachedResponse): void {
  const fastify = fastifysListener(app);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.server.removeListener('request', fastify);
  app.server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const body = closing || request.method !== 'GET' ? undefined : cachedBodyFor(request.url, cached);
    if (body === undefined) return fastify(request, response);
    response.writeHead(200, ['content-type', JSON_TYPE, 'content-length', String(body.length)]); // a flat list: no object's keys to walk
    response.end(body);
  });
}

/** The request listener Fastify gave the server it made (Fastify keeps its own settings of that server: timeouts, bindings). */
function fastifysListener(app: FastifyInstance): RequestListener {
  const listeners = app.server.listeners('request') as RequestListener[];
  if (listeners.length !== 1) throw new Error(`expected Fastify's one request listener on its server, found ${listeners.length}`);
  return listeners[0]!;
}

function cachedBodyFor(url: string | undefined, cached: CachedResponse): Buffer | undefined {
  if (url === undefined || !url.startsWith(PREFIX)) return undefined;
  const id = url.slice(PREFIX.length);
  return PACT_ID.test(id) ? cached(id) : undefined;
}
