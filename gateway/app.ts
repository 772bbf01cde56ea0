import { isUtf8 } from 'node:buffer';
import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { wellFormedProblem } from '../protocol/well-formed.js';
import { pactError } from '../protocol/errors.js';
import { registerAccessRoutes, type AccessRouteDeps } from './access-routes.js';
import { registerCliRoutes } from './cli-routes.js';
import { registerDiscoveryRoutes } from './discovery-routes.js';
import { registerMachineRoutes, type MachineRouteDeps } from './machines-routes.js';
import { registerRailRoutes, type RailRouteDeps } from './rail-routes.js';
import { pageBase } from './page-base.js';
import { registerOpenApi } from './openapi.js';
import { registerBlobRoutes, type BlobRouteDeps } from './blob-routes.js';
import { installErrorHandling, sendError } from './errors.js';
import { registerHealth, type HealthDeps } from './health.js';
import { registerOfferRoutes, type OfferRouteDeps } from './offer-routes.js';
import { registerPactRoutes, type PactRouteDeps } from './pact-routes.js';
import { registerStreamRoutes, type StreamRouteDeps } from './stream-routes.js';
import { registerRateLimits } from './rate-limits.js';
import type { HttpLimits } from '../runtime/config.js';
import { answerCachedPactReads } from './cached-pact-reads.js';
import { registerTestHooks, type TestHookDeps } from './test-hooks.js';

export interface GatewayDeps extends Omit<PactRouteDeps, 'blobs'>, Omit<HealthDeps, 'access'>, Omit<BlobRouteDeps, 'access'>, OfferRouteDeps, StreamRouteDeps, AccessRouteDeps, MachineRouteDeps, Omit<RailRouteDeps, 'access'> {
  testHooks: TestHookDeps | undefined;
  http: HttpLimits;
  /** PACT_PUBLIC_URL: the base the pages and the installer name, instead of the Host asked for. */
  publicUrl: string | undefined;
  /** Requests carrying it (the node's own evaluator) are not rate limited. */
  internalToken?: string;
}

const BODY_LIMIT = 256 * 1024;

/**
 * A JSON body as the service can keep and sign it: valid UTF-8 (invalid bytes would silently become
 * U+FFFD), valid JSON, and well formed for canonicalization. An empty body is no body (poke takes none).
 */
function parseJsonBody(body: Buffer): { value: unknown } | { problem: string } {
  if (body.length === 0) return { value: undefined };
  if (!isUtf8(body)) return { problem: 'the body is not valid UTF-8' };
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    return { problem: 'the body is not valid JSON' };
  }
  const problem = wellFormedProblem(value);
  return problem ? { problem } : { value };
}

/** The HTTP face: validate, verify, turn into a command, answer. No lifecycle rule lives here. */
export async function buildGateway(deps: GatewayDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    connectionTimeout: deps.http.connectionTimeoutMs,
    requestTimeout: deps.http.requestTimeoutMs,
    keepAliveTimeout: deps.http.keepAliveTimeoutMs,
    // A URL Fastify cannot decode (`/pacts/%zz`) names nothing here: 404 in the one error shape.
    frameworkErrors: (error, request, reply) =>
      sendError(reply, error.code === 'FST_ERR_BAD_URL' ? pactError('not_found', `no route ${request.method} ${request.url}`) : pactError('invalid_request', error.message)),
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
  });
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_request, body, done) => {
    const parsed = parseJsonBody(body as Buffer);
    if ('problem' in parsed) return done(Object.assign(new Error(parsed.problem), { statusCode: 400 }), undefined);
    done(null, parsed.value);
  });
  app.server.maxConnections = deps.http.maxConnections;
  // First of the hooks: it stops answering from memory as soon as the app starts closing.
  answerCachedPactReads(app, (id) => deps.readModel.cachedResponse(id));
  installErrorHandling(app);
  await registerRateLimits(app, deps.internalToken);
  await registerOpenApi(app, deps.version);
  registerPactRoutes(app, deps);
  registerBlobRoutes(app, deps);
  registerOfferRoutes(app, deps);
  registerStreamRoutes(app, deps);
  registerAccessRoutes(app, deps);
  registerRailRoutes(app, deps);
  registerHealth(app, deps);
  if (deps.testHooks) registerTestHooks(app, deps.testHooks);
  // Without PACT_PUBLIC_URL or a usable Host header, the pages name the port this server listens on.
  const baseOf = pageBase(deps.publicUrl, () => `http://localhost:${(app.server.address() as AddressInfo | null)?.port ?? ''}`);
  registerDiscoveryRoutes(app, deps, baseOf);
  registerCliRoutes(app, baseOf);
  registerMachineRoutes(app, deps);
  return app;
}
