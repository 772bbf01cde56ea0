import type { FastifyReply, FastifyRequest } from 'fastify';

/** A Host header this server will write into a page: a name or address and a port, nothing else. */
const HOST = /^[A-Za-z0-9.-]{1,253}(:[0-9]{1,5})?$|^\[[0-9A-Fa-f:.]{2,45}\](:[0-9]{1,5})?$/;

export type BaseOf = (request: FastifyRequest) => string;

/**
 * The address the pages and the installer give for this server: PACT_PUBLIC_URL when set (behind a TLS proxy,
 * say), else the Host the client asked for when it is a plain host, else this server's own address.
 */
export function pageBase(publicUrl: string | undefined, ownAddress: () => string): BaseOf {
  if (publicUrl) return () => publicUrl;
  return (request) => {
    const host = request.headers.host;
    return host && HOST.test(host) ? `${request.protocol}://${host}` : ownAddress();
  };
}

/** A page that names the Host asked for: no cache may keep one host's page for another. */
export const namingTheHost = (reply: FastifyReply, type: string) => reply.type(type).header('cache-control', 'no-store').header('vary', 'Host');
