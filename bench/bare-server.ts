/**
 * A bare Fastify server, the yardstick for the service's reads: `GET /pacts/:id` and `GET /offers`, each
 * answering the bytes it is sent over IPC with the service's content type. Started by bench/children.ts.
 */
import Fastify, { type FastifyReply } from 'fastify';

process.once('message', async ({ body }: { body: string }) => {
  const app = Fastify();
  const answer = (_request: unknown, reply: FastifyReply) => reply.type('application/json; charset=utf-8').send(body);
  app.get('/pacts/:id', answer);
  app.get('/offers', answer);
  await app.listen({ host: '127.0.0.1', port: 0 });
  process.send!({ port: (app.server.address() as { port: number }).port });
});
process.on('disconnect', () => process.exit(0));
