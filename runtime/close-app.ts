import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * How to close `app` (call before it listens): no new requests, those in flight answered, idle keep-alive
 * connections closed (Node does that), and connections that never sent a request destroyed at once. Without
 * the last, a client holding such a socket open (a browser's preconnect, a pool's spare) keeps the close
 * waiting until Node's headers timeout, a minute.
 */
export function closerOf(app: FastifyInstance): () => Promise<void> {
  const silent = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    silent.add(socket);
    socket.once('close', () => silent.delete(socket));
  });
  app.server.on('request', (request: { socket: Socket }) => silent.delete(request.socket));
  return async () => {
    const closed = app.close();
    for (const socket of silent) socket.destroy();
    await closed;
  };
}
