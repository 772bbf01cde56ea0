import Fastify, { type FastifyInstance } from 'fastify';
import { installErrorHandling } from './errors.js';
import { registerHealth, type HealthDeps } from './health.js';
import { registerPactRoutes, type PactRouteDeps } from './pact-routes.js';
import { registerTestHooks, type TestHookDeps } from './test-hooks.js';

export interface GatewayDeps extends PactRouteDeps, HealthDeps {
  testHooks: TestHookDeps | undefined;
}

const BODY_LIMIT = 256 * 1024;

/** The HTTP face: validate, verify, turn into a command, answer. No lifecycle rule lives here. */
export function buildGateway(deps: GatewayDeps): FastifyInstance {
  const app = Fastify({
    logger: false,
    bodyLimit: BODY_LIMIT,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false, allErrors: false } },
  });
  // An empty JSON body is no body (poke takes none); anything else must parse.
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, text, done) => {
    if (text === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text as string));
    } catch {
      done(Object.assign(new Error('the body is not valid JSON'), { statusCode: 400 }), undefined);
    }
  });
  installErrorHandling(app);
  registerPactRoutes(app, deps);
  registerHealth(app, deps);
  if (deps.testHooks) registerTestHooks(app, deps.testHooks);
  app.get('/', async (_request, reply) => reply.type('text/plain').send('Pact escrow service. See /health and the README.\n'));
  return app;
}
