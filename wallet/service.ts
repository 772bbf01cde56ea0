import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { FastifyInstance } from 'fastify';
import type { Rail } from '../rails/rail.js';
import type { ManualOffsetClock } from '../runtime/clock.js';
import { buildWalletApp } from './app.js';
import { IdempotencyStore } from './idempotency.js';
import type { InternalTokens } from './internal-auth.js';
import { WalletJournal } from './journal.js';
import { TokenIndex } from './token-index.js';
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
}

export interface WalletService {
  url: string;
  close(): Promise<void>;
}

/** The credit wallet service beside the escrow: its own port, the same NATS (the host role's connection) and clock. */
export async function startWalletService(
  settings: WalletServiceSettings,
  nats: { js: JetStreamClient; jsm: JetStreamManager },
  clock: ManualOffsetClock,
  checkoutRails: ReadonlyMap<string, Rail>,
): Promise<WalletService> {
  const desk = new WalletDesk(new WalletJournal(nats.js, nats.jsm), clock);
  const app: FastifyInstance = await buildWalletApp({
    desk,
    tokens: new TokenIndex(nats.js, nats.jsm),
    idempotency: new IdempotencyStore(nats.js, nats.jsm, () => clock.now()),
    clock,
    checkoutRails,
    internalTokens: settings.internalTokens,
    reservationTtlMs: settings.reservationTtlMs,
    claimsPerMinute: settings.claimsPerMinute,
    createsPerMinute: settings.createsPerMinute,
    baseOf: (host) => settings.publicUrl ?? `http://${host ?? `${settings.host}:${settings.port}`}`,
    testClock: settings.testHooks ? clock : undefined,
  });
  await app.listen({ port: settings.port, host: settings.host });
  const { port } = app.server.address() as { port: number };
  return { url: `http://${settings.host}:${port}`, close: () => app.close() };
}
