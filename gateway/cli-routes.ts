import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { buildCliPackage, type CliPackage } from '../client/package/build.js';
import { pactError } from '../protocol/errors.js';
import { sendError } from './errors.js';
import { namingTheHost, type BaseOf } from './page-base.js';

const INSTALL_SH = readFileSync(new URL('../client/package/install.sh', import.meta.url), 'utf8');

/**
 * The CLI, served by the server it talks to: `GET /install` (a POSIX shell script that installs it with npm into
 * a prefix, no root, after checking the package's SHA-256) and `GET /pact-cli.tgz` (the package, built from this
 * tree on first request and kept; the same version is the same bytes, so its ETag is their SHA-256).
 */
export function registerCliRoutes(app: FastifyInstance, baseOf: BaseOf): void {
  let built: Promise<CliPackage> | undefined;
  const cliPackage = () => {
    built ??= buildCliPackage().catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };
  const unbuilt = (error: unknown) => {
    console.error('building the CLI package failed:', String(error));
    return pactError('unavailable', 'the CLI package could not be built; retry later');
  };

  app.get('/install', async (request, reply) => {
    const cli = await cliPackage().catch(unbuilt);
    if ('error' in cli) return sendError(reply, cli);
    const script = INSTALL_SH.replaceAll('{{base}}', baseOf(request)).replaceAll('{{sha256}}', cli.sha256);
    return namingTheHost(reply, 'text/x-shellscript; charset=utf-8').send(script);
  });
  app.get('/pact-cli.tgz', async (request, reply) => {
    const cli = await cliPackage().catch(unbuilt);
    if ('error' in cli) return sendError(reply, cli);
    const etag = `"${cli.sha256}"`;
    reply.header('etag', etag).header('cache-control', 'no-cache');
    if (matches(request.headers['if-none-match'], etag)) return reply.code(304).send();
    return reply
      .type('application/gzip')
      .header('content-disposition', `attachment; filename="pact-cli-${cli.version}.tgz"`)
      .send(cli.bytes);
  });
}

/** `If-None-Match` names the ETag: in a list, weak or not, or `*`. */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(',').some((tag) => {
    const value = tag.trim();
    return value === '*' || value.replace(/^W\//, '') === etag;
  });
}
