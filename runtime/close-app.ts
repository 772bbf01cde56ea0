import type { FastifyInstance } from 'fastify';

const GRACE_MS = 2_000;

/**
 * Closes an HTTP app: no new requests, those in flight get `GRACE_MS` to finish, then every connection still
 * open is cut. Without the cut, a client holding a socket open with no request on it (a browser's preconnect, an
 * idle pool) keeps the close waiting until Node's headers timeout, a minute.
 */
export async function closeApp(app: FastifyInstance): Promise<void> {
  const cut = setTimeout(() => app.server.closeAllConnections(), GRACE_MS);
  try {
    await app.close();
  } finally {
    clearTimeout(cut);
  }
}
