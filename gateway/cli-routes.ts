import { readFileSync } from 'node:fs';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { buildCliPackage, type CliPackage } from '../client/package/build.js';
import { pactError } from '../protocol/errors.js';
import { sendError } from './errors.js';

const INSTALL_SH = readFileSync(new URL('../client/package/install.sh', import.meta.url), 'utf8');

/**
 * The CLI, served by the server it talks to: `GET /install` (a POSIX shell script that installs it with npm into
 * a prefix, no root) and `GET /pact-cli.tgz` (the package, built from this tree on first request and kept;
 * the same version is the same bytes, so its ETag is their SHA-256).
 */
export function registerCliRoutes(app: FastifyInstance, baseOf: (request: FastifyRequest) => string): void {
  let built: Promise<CliPackage> | undefined;
  const cliPackage = () => {
    built ??= buildCliPackage().catch((error: unknown) => {
      built = undefined;
      throw error;
    });
    return built;
  };

  app.get('/install', async (request, reply) =>
    reply.type('text/x-shellscript; charset=utf-8').send(INSTALL_SH.replaceAll('{{base}}', baseOf(request))),
  );
  app.get('/pact-cli.tgz', async (request, reply) => {
    let cli: CliPackage;
    try {
      cli = await cliPackage();
    } catch (error) {
      request.log.error({ err: error }, 'building the CLI package failed');
      return sendError(reply, pactError('unavailable', 'the CLI package could not be built; retry later'));
    }
    const etag = `"${cli.sha256}"`;
    reply.header('etag', etag).header('cache-control', 'no-cache');
    if (request.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply
      .type('application/gzip')
      .header('content-disposition', `attachment; filename="pact-cli-${cli.version}.tgz"`)
      .send(cli.bytes);
  });
}
