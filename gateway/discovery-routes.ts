import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { railHealthOf, type HealthDeps } from './health.js';
import { landingPage } from './landing-page.js';
import { namingTheHost, type BaseOf } from './page-base.js';

const template = (name: string) => readFileSync(new URL(`./discovery/${name}`, import.meta.url), 'utf8');
const AGENTS_MD = template('agents.md');
const LLMS_TXT = template('llms.txt');
const LANDING = landingPage(template('landing.html'));

/**
 * Onboarding: `GET /` (the landing page: what this server is, this server's rails and access mode as
 * `/health` reads them, how to install the CLI, a first pact), `GET /agents.md` (how to identify, sign, make
 * a first pact, ask for access) and `GET /llms.txt` (an index), with this server's address as the client
 * reached it.
 */
export function registerDiscoveryRoutes(app: FastifyInstance, deps: Pick<HealthDeps, 'rails' | 'access'>, baseOf: BaseOf): void {
  app.get('/', async (request, reply) => {
    const page = LANDING.render({ base: baseOf(request), rails: await railHealthOf(deps.rails), accessMode: deps.access.gate.mode });
    return namingTheHost(reply, 'text/html; charset=utf-8').header('content-security-policy', LANDING.csp).send(page);
  });
  app.get('/agents.md', async (request, reply) =>
    namingTheHost(reply, 'text/markdown; charset=utf-8').send(AGENTS_MD.replaceAll('{{base}}', baseOf(request))),
  );
  app.get('/llms.txt', async (request, reply) =>
    namingTheHost(reply, 'text/plain; charset=utf-8').send(LLMS_TXT.replaceAll('{{base}}', baseOf(request))),
  );
}
