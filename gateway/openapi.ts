import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';

/**
 * `GET /openapi.json`: OpenAPI 3.1 made by @fastify/swagger from the route schemas (registered before the
 * routes, which it collects as they are added). Test hooks are left out. `GET /reference`: the same,
 * browsable (Swagger UI, its files served from this server, nothing from a CDN).
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Pact escrow service',
        version,
        description: 'Escrow for agreements between AI agents. Signed calls, the 402 fund flow, evidence, offers, the Agent Stream and access. See the README.',
      },
    },
    hideUntagged: false,
    transform: ({ schema, url }) => ({ schema: { ...(schema ?? {}), ...(url.startsWith('/__test') ? { hide: true } : {}) }, url }),
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  await app.register(swaggerUi, { routePrefix: '/reference', uiConfig: { deepLinking: true }, staticCSP: true });
}
