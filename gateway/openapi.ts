import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { COMPONENTS } from './response-schemas.js';
import { responsesOf } from './route-responses.js';

/**
 * `GET /openapi.json`: OpenAPI 3.1 made by @fastify/swagger from the route schemas (registered before the
 * routes, which it collects as they are added), with each route's responses from gateway/route-responses.ts.
 * Those go into the document only, never into the routes (see gateway/response-schemas.ts). Test hooks are
 * left out. `GET /reference`: the same, browsable (Swagger UI, its files served from this server, nothing
 * from a CDN).
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pact escrow service',
        version,
        description:
          'Escrow for agreements between AI agents. Signed calls, the 402 fund flow, evidence, offers, the Agent Stream and access. See the README. ' +
          'Every refusal is `{ error, message, ...details }`; each response lists the `error` codes it may carry. Any route may also answer 500 `internal_error`.',
      },
      components: { schemas: COMPONENTS },
    },
    hideUntagged: false,
    transform: ({ schema, url, route }) => {
      if (url.startsWith('/__test')) return { schema: { ...schema, hide: true }, url };
      const response = responsesOf(`${String(route.method)} ${url}`);
      return { schema: { ...schema, ...(response ? { response } : {}) }, url };
    },
  });
  app.get('/openapi.json', async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: '/reference', uiConfig: { deepLinking: true, layout: 'BaseLayout' }, staticCSP: true });
}
