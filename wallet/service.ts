import type { FastifyInstance } from 'fastify';
import type { Rail } from '../rails/rail.js';
import type { ManualOffsetClock } from '../runtime/clock.js';
import type { Nats } from '../actors/nats.js';
import type { JsonLevel } from '../storage/level.js';
import { closerOf } from '../runtime/close-app.js';
import { buildWalletApp } from './app.js';
import { WalletKeeper } from './wallet-keeper.js';
import { WalletProjector } from './wallet-projector.js';
import { WalletReadModel } from './read-model.js';
import { Catalog } from './registry/catalog.js';
import { Registry } from './registry/registry.js';
import { Providers, TEST_ECHO_CAPABILITY } from './executions/providers.js';
import type { ProviderPayer } from './executions/provider-payer.js';
import { RegistryRefresher, type RegistrySource } from './registry/refresher.js';
import { IdempotencyStore } from './idempotency.js';
import type { InternalTokens } from './internal-auth.js';
import { WalletJournal } from './journal.js';
import { TokenIndex } from './token-index.js';
import { PaymentClaims } from './payment-claims.js';
import { WalletDesk } from './wallet-desk.js';

export interface WalletServiceSettings {
  port: number;
  host: string;
  /** How this service names itself in the URLs it hands out; else the Host asked for. */
  publicUrl: string | undefined;
  claimsPerMinute: number;
  createsPerMinute: number;
  testHooks: boolean;
  /** The bearers of the internal reservation routes: WALLET_INTERNAL_TOKEN, and this process's credit rail's. */
  internalTokens: InternalTokens;
  reservationTtlMs: number;
  /** Registry sources to read beside the shipped snapshots, and how often. */
  registrySources: RegistrySource[];
  registryRefreshMs: number;
  registryAllowPrivate: boolean;
  /** The service's payer for x402 and mpp providers (none: they are not executable). */
  providerPayer: ProviderPayer | undefined;
  providerTimeoutMs: number;
  /** A deployment's own capabilities beside the shipped catalog. */
  catalogFile: string | undefined;
}

/** How often the keeper looks for lapsed holds and credits never applied. */
const KEEPER_EVERY_MS = 5_000;

export interface WalletService {
  url: string;
  close(): Promise<void>;
}

/** The credit wallet service beside the escrow: its own port, the same NATS (the host role's connection) and clock. */
export async function startWalletService(
  settings: WalletServiceSettings,
  node: { nats: Nats; level: JsonLevel; nodeId: string },
  clock: ManualOffsetClock,
  checkoutRails: ReadonlyMap<string, Rail>,
  /** Every rail of the node but credit: where the keeper looks for a checkout's money. */
  paymentRails: readonly Rail[],
): Promise<WalletService> {
  const { nats } = node;
  const desk = new WalletDesk(new WalletJournal(nats.publisher, nats.jsm), clock);
  const readModel = new WalletReadModel(node.level);
  const projector = new WalletProjector(nats, readModel, node.nodeId);
  await projector.start();
  const keeper = new WalletKeeper(desk, readModel, clock, paymentRails, settings.providerPayer);
  const registry = Registry.shipped();
  const providers = new Providers({ testHooks: settings.testHooks, payer: settings.providerPayer, timeoutMs: settings.providerTimeoutMs, allowPrivate: settings.registryAllowPrivate });
  const refresher = new RegistryRefresher(registry, settings.registrySources, () => clock.now(), settings.registryAllowPrivate);
  if (settings.registrySources.length > 0) {
    await refresher.run();
    refresher.start(settings.registryRefreshMs);
  }
  const app: FastifyInstance = await buildWalletApp({
    registry,
    catalog: new Catalog(registry, [...(settings.testHooks ? [TEST_ECHO_CAPABILITY] : []), ...Catalog.entriesOf(settings.catalogFile)]),
    providers,
    blocking: (item) => providers.blocking({ rail: item.rail, network: item.payment.network, asset: item.payment.asset }),
    readModel,
    projector,
    desk,
    tokens: new TokenIndex(nats.publisher, nats.jsm),
    claims: new PaymentClaims(nats.publisher, nats.jsm),
    idempotency: new IdempotencyStore(nats.publisher, nats.jsm, () => clock.now()),
    clock,
    checkoutRails,
    internalTokens: settings.internalTokens,
    reservationTtlMs: settings.reservationTtlMs,
    claimsPerMinute: settings.claimsPerMinute,
    createsPerMinute: settings.createsPerMinute,
    baseOf: (host) => settings.publicUrl ?? `http://${host ?? `${settings.host}:${settings.port}`}`,
    testHooks: settings.testHooks ? { clock, keeper, projector, providers, registry } : undefined,
  });
  const closeApp = closerOf(app);
  await app.listen({ port: settings.port, host: settings.host });
  const { port } = app.server.address() as { port: number };
  await keeper.run().catch((error: unknown) => console.error('the wallet keeper failed:', String(error)));
  keeper.start(KEEPER_EVERY_MS);
  return {
    url: `http://${settings.host}:${port}`,
    async close() {
      keeper.stop();
      refresher.stop();
      await closeApp();
      await projector.stop();
    },
  };
}
