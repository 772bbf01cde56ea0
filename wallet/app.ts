import rateLimit from '@fastify/rate-limit';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import type { ManualOffsetClock } from '../runtime/clock.js';
import { walletError } from './errors.js';
import { WALLET_COMPONENTS, walletResponsesOf } from './openapi-responses.js';
import { sendWalletError } from './reply.js';
import { registerCheckoutRoutes, type CheckoutRouteDeps } from './routes/checkout.js';
import { registerDiscoveryRoutes, type DiscoveryRouteDeps } from './routes/discovery.js';
import { registerExecutionRoutes, type ExecutionRouteDeps } from './routes/executions.js';
import { registerMcp } from './mcp.js';
import { registerPairingRoutes, type PairingRouteDeps } from './routes/pairings.js';
import { registerReservationRoutes, type ReservationRouteDeps } from './routes/reservations.js';
import { registerWalletRoutes, type WalletRouteDeps } from './routes/wallets.js';
import type { WalletKeeper } from './wallet-keeper.js';
import type { WalletProjector } from './wallet-projector.js';
import type { Providers } from './executions/providers.js';
import type { Registry } from './registry/registry.js';

/** The OpenAPI document's title and version (WALLET-DECISIONS.md). */
export const WALLET_API = { title: 'Wallet', version: '0.5.0' } as const;

export interface WalletAppDeps extends WalletRouteDeps, CheckoutRouteDeps, ReservationRouteDeps, DiscoveryRouteDeps, ExecutionRouteDeps, Omit<PairingRouteDeps, 'clock'> {
  /** Test hooks: `POST /__test/clock` moves the process's one clock (the escrow's too), then runs the keeper. */
  testHooks: WalletTestHooks | undefined;
}

/** The wallet service's HTTP face, on its own port: routes, its error shape, its OpenAPI document. */
export async function buildWalletApp(deps: WalletAppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: 64 * 1024,
    ajv: { customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: false } },
    // A URL Fastify cannot decode names nothing here: 404 in the one error shape.
    frameworkErrors: (error, request, reply) =>
      sendWalletError(reply, error.code === 'FST_ERR_BAD_URL' ? walletError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`) : walletError('invalid_request', error.message)),
  });
  installWalletErrors(app);
  await app.register(rateLimit, {
    global: false,
    errorResponseBuilder: (_request, context) => ({ statusCode: 429, error: 'rate_limited', message: `more than ${context.max} requests a minute from this address; retry in ${context.after}`, retryAfter: Math.ceil(context.ttl / 1000) }),
  });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { ...WALLET_API, description: 'Prepaid credit for agents: the capability catalog, the x402 and MPP registry and discovery, wallets, pairing, checkout, the usage ledger and reservations. Every refusal is `{ error, message, ...details }`.' },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } }, schemas: WALLET_COMPONENTS },
    },
    transform: ({ schema, url, route }) => {
      if (url.startsWith('/__test')) return { schema: { ...schema, hide: true }, url };
      const response = walletResponsesOf(`${String(route.method)} ${url}`);
      return { schema: { ...schema, ...(response ? { response } : {}) }, url };
    },
  });
  app.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  registerWalletRoutes(app, deps);
  registerPairingRoutes(app, { ...deps, clock: deps.clock });
  registerCheckoutRoutes(app, deps);
  registerReservationRoutes(app, deps);
  registerDiscoveryRoutes(app, deps);
  registerExecutionRoutes(app, deps);
  registerMcp(app);
  if (deps.testHooks) registerWalletTestHooks(app, deps.testHooks);
  return app;
}

function installWalletErrors(app: FastifyInstance): void {
  app.setNotFoundHandler((request, reply) => sendWalletError(reply, walletError('not_found', `no route ${request.method} ${request.url.split('?')[0]}`)));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error.validation) {
      const first = error.validation[0];
      return sendWalletError(reply, walletError('invalid_request', `${error.validationContext ?? 'body'}${first?.instancePath ?? ''} ${first?.message ?? 'is invalid'}`));
    }
    if (error.statusCode === 429) return sendWalletError(reply, walletError('rate_limited', error.message, { retryAfter: (error as unknown as { retryAfter?: number }).retryAfter ?? 60 }));
    if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) return sendWalletError(reply, walletError('invalid_request', error.message));
    console.error(`wallet: unexpected error on ${request.method} ${request.url.split('?')[0]}:`, error.stack ?? String(error));
    return sendWalletError(reply, walletError('internal_error', 'something went wrong on our side'));
  });
}

export interface WalletTestHooks {
  clock: ManualOffsetClock;
  keeper: WalletKeeper;
  projector: WalletProjector;
  providers: Providers;
  registry: Registry;
}

function registerWalletTestHooks(app: FastifyInstance, { clock, keeper, projector, providers, registry }: WalletTestHooks): void {
  // The next provider call (to the registry item named, or to any) fails, as a provider's failure would.
  const providerBody = { type: 'object', required: ['failNext'], additionalProperties: false, properties: { registryId: { type: 'string', maxLength: 64 }, failNext: { const: true } } } as const;
  app.post<{ Body: { registryId?: string; failNext: true } }>('/__test/providers', { schema: { body: providerBody } }, async (request, reply) => {
    const { registryId } = request.body;
    const item = registryId === undefined ? undefined : registry.get(registryId);
    if (registryId !== undefined && !item) return sendWalletError(reply, walletError('not_found', `no registry item ${registryId}`));
    providers.failNext(item?.resource);
    return { failNext: registryId ?? 'any' };
  });
  const body = { type: 'object', additionalProperties: false, properties: { advanceMs: { type: 'integer', minimum: 0 }, set: { type: 'integer', minimum: 0 } } } as const;
  app.post<{ Body: { advanceMs?: number; set?: number } }>('/__test/clock', { schema: { body } }, async (request) => {
    if (request.body.set !== undefined) clock.set(request.body.set);
    if (request.body.advanceMs !== undefined) clock.advance(request.body.advanceMs);
    await projector.current(5_000); // the keeper sees every hold made before the clock moved
    await keeper.run();
    return { now: clock.now() };
  });
}
