/**
 * A bare Fastify server, the yardstick for the service's reads: one route, `GET /pacts/:id`, answering
 * the bytes it is sent over IPC with the service's content type. Started by bench/children.ts.
 */
import Fastify from 'fastify';

process.once('message', async ({ body }: { body: string }) => {
  const app = Fastify();
  app.get('/pacts/:id', (_request, reply) => reply.type('application/json; charset=utf-8').send(body));
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send!({ port: (app.server.address() as { port: number }).port });
});
process.on('disconnect', () => process.exit(0));
