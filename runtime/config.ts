import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { DEFAULT_JOURNAL_MAX_BYTES } from '../actors/nats.js';
import { accessConfig, type AccessConfig } from '../access/config.js';
import { parseSources, type RegistrySource } from '../wallet/registry/refresher.js';
import { CALL_TIMEOUT_MS } from '../wallet/executions/provider-call.js';
import { evaluatorConfig, type EvaluatorConfig } from '../evaluator/config.js';
import type { BlobLimits } from '../gateway/blob-routes.js';
import { evmConfig, type EvmConfig } from '../rails/evm/config.js';
import { mppConfig, type MppConfig } from '../rails/mpp/config.js';
import type { RateLimits } from '../gateway/rate-limits.js';

/** Everything the service reads from its environment, with its defaults. Listed in the README. */
export interface Config {
  port: number;
  host: string;
  /** WALLET_PORT: the credit wallet service's port (0 picks a free one). */
  walletPort: number;
  /** WALLET_PUBLIC_URL: how the wallet service names itself in the URLs it hands out; else the Host asked for. */
  walletPublicUrl: string | undefined;
  /** WALLET_RATE_LIMIT_CLAIMS: pairing claims per minute per IP (0 off). */
  walletClaimsPerMinute: number;
  /** WALLET_RATE_LIMIT_CREATES: wallets created per minute per IP (0 off). */
  walletCreatesPerMinute: number;
  /** WALLET_INTERNAL_TOKEN: the internal reservation routes' bearer (unset: they answer 503). */
  walletInternalToken: string | undefined;
  /** WALLET_RESERVATION_TTL_MS: how long a reservation holds when its request names no expiry. */
  walletReservationTtlMs: number;
  /**
   * PACT_CREDIT_WALLET_URL: the wallet service the credit rail reserves on, when it is not this process's own
   * (then WALLET_INTERNAL_TOKEN is its internal routes' token).
   */
  creditWalletUrl: string | undefined;
  /** WALLET_REGISTRY_SOURCES: `x402-bazaar=<url>,mpp-directory=<url>`, read into the registry beside its shipped snapshots. */
  walletRegistrySources: RegistrySource[];
  /** WALLET_REGISTRY_REFRESH_MS: how often the sources are read again and their endpoints checked. */
  walletRegistryRefreshMs: number;
  /** WALLET_REGISTRY_ALLOW_PRIVATE=1: sources and endpoints on loopback or private addresses are read too (tests only). */
  walletRegistryAllowPrivate: boolean;
  /** WALLET_PROVIDER_KEY_FILE: the service's own payer key for x402 and mpp providers, on the rails' chain (PACT_X402_*). */
  walletProviderKeyFile: string | undefined;
  /** WALLET_PROVIDER_TIMEOUT_MS: how long a provider call may take (at most 30 s). */
  walletProviderTimeoutMs: number;
  /** WALLET_CATALOG_FILE: a deployment's own capabilities (`{ capabilities: [...] }`), beside the shipped catalog. */
  walletCatalogFile: string | undefined;
  /** WALLET_CHECKOUT_RAILS: the rails a checkout is paid with (comma-separated: `mock`, which credits for nothing, development only; `x402`, `mpp`). */
  walletCheckoutRails: string[];
  dataDir: string;
  /** NATS_URL: one server or several, comma-separated; unset, the node runs a private nats-server. */
  natsUrl: string | undefined;
  /** PACT_NATS_CREDENTIALS: the role users (`actors/nats-roles.ts`) for a NATS that needs them. */
  natsCredentialsFile: string | undefined;
  testHooks: boolean;
  /** PACT_INSPECT=1: send this node's pact transitions to the Stately inspector (runtime/inspection.ts). */
  inspect: boolean;
  /** PACT_SERVER_KEY_FILE: the deployment's own key (fees, notifications); every node of one deployment shares it. */
  serverKeyFile: string | undefined;
  evaluator: EvaluatorConfig;
  access: AccessConfig;
  /** PACT_PUBLIC_URL: how this server names itself to the world (mails, its pages, its installer); else the Host asked for. */
  publicUrl: string | undefined;
  partitions: number;
  replicas: number;
  /** PACT_JOURNAL_MAX_BYTES: the journal stream's byte limit (appends fail when it is full). */
  journalMaxBytes: number;
  maxActors: number;
  actorIdleMs: number;
  /** PACT_VERIFY_THREADS: worker threads that check signatures; 0 checks them on the main thread. */
  verifyThreads: number;
  /** PACT_READ_CACHE_BYTES: `GET /pacts/:id` bodies kept in memory. */
  readCacheBytes: number;
  /** PACT_LEVELDB_WRITE_BUFFER_BYTES: the memtable of the node's LevelDB (64 KiB to 1 GiB, the range LevelDB keeps to). */
  levelWriteBufferBytes: number;
  /** PACT_OFFER_WATCHERS: `GET /offers/watch` long polls that may wait at once on this node. */
  offerWatchers: number;
  /** PACT_EVENT_QUOTA: Agent Stream events accepted per publisher per hour. */
  eventQuota: number;
  /** PACT_RATE_LIMIT_PULLS: `POST /v0/pull` tokens per IP per minute (gateway/token-buckets.ts); 0 off. */
  pullsPerMinute: number;
  /** PACT_PULL_WAITERS: long polls waiting at once on one node. */
  pullWaiters: number;
  mockDefaultBalance: bigint;
  /** PACT_X402_RPC_URL and the rest (rails/evm/config.ts): the chain of the x402 rail; unset, it is not offered. */
  evm: EvmConfig | undefined;
  /** PACT_MPP_SECRET_FILE and the rest (rails/mpp/config.ts): the mpp rail, on the same chain; unset, it is not offered. */
  mpp: MppConfig | undefined;
  commandTimeoutMs: number;
  http: HttpLimits;
  rateLimits: RateLimits;
  blobs: BlobLimits;
}

/** How long and how many connections the HTTP server holds (README, Configuration). */
export interface HttpLimits {
  /** An idle socket, one whose declared body never comes included, is closed after this. */
  connectionTimeoutMs: number;
  /** The whole request must arrive within this. */
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

function integer(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const raw = env[name];
  // Blank is unset: Number(' ') is 0, which would turn a limit off unseen.
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) throw new Error(`${name} must be a non-negative integer, got ${raw}`);
  return value;
}

function between(name: string, value: number, min: number, max: number): number {
  if (value < min || value > max) throw new Error(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return {
    port: integer('PACT_PORT', 8402, env),
    host: env.PACT_HOST || '127.0.0.1',
    walletPort: integer('WALLET_PORT', 8403, env),
    walletPublicUrl: publicUrl(env.WALLET_PUBLIC_URL, 'WALLET_PUBLIC_URL'),
    walletClaimsPerMinute: integer('WALLET_RATE_LIMIT_CLAIMS', 30, env),
    walletCreatesPerMinute: integer('WALLET_RATE_LIMIT_CREATES', 30, env),
    walletInternalToken: env.WALLET_INTERNAL_TOKEN || undefined,
    walletReservationTtlMs: Math.max(1, integer('WALLET_RESERVATION_TTL_MS', 7 * 86_400_000, env)),
    creditWalletUrl: creditWalletUrl(env),
    walletRegistrySources: parseSources(env.WALLET_REGISTRY_SOURCES),
    walletRegistryRefreshMs: Math.max(1_000, integer('WALLET_REGISTRY_REFRESH_MS', 3_600_000, env)),
    walletRegistryAllowPrivate: env.WALLET_REGISTRY_ALLOW_PRIVATE === '1',
    walletProviderKeyFile: env.WALLET_PROVIDER_KEY_FILE || undefined,
    walletProviderTimeoutMs: between('WALLET_PROVIDER_TIMEOUT_MS', integer('WALLET_PROVIDER_TIMEOUT_MS', CALL_TIMEOUT_MS, env), 100, CALL_TIMEOUT_MS),
    walletCatalogFile: env.WALLET_CATALOG_FILE || undefined,
    // Mock checkouts credit for nothing: on by default only where no real rail is configured (development).
    walletCheckoutRails: (env.WALLET_CHECKOUT_RAILS ?? (env.PACT_X402_RPC_URL ? '' : 'mock')).split(',').map((rail) => rail.trim()).filter(Boolean),
    dataDir: resolve(env.PACT_DATA_DIR || './data'),
    natsUrl: env.NATS_URL || undefined,
    natsCredentialsFile: env.PACT_NATS_CREDENTIALS || undefined,
    testHooks: env.PACT_TEST_HOOKS === '1',
    inspect: env.PACT_INSPECT === '1',
    serverKeyFile: env.PACT_SERVER_KEY_FILE || undefined,
    evaluator: evaluatorConfig(env, {
      timeoutMs: integer('PACT_EVALUATOR_TIMEOUT_MS', 24 * 3_600_000, env),
      attemptMs: Math.max(1, integer('PACT_EVALUATOR_ATTEMPT_MS', 120_000, env)),
    }),
    access: accessConfig(env, { requestsPerIpPerHour: integer('PACT_RATE_LIMIT_ACCESS', 20, env) }),
    publicUrl: publicUrl(env.PACT_PUBLIC_URL, 'PACT_PUBLIC_URL'),
    partitions: Math.max(1, integer('PACT_PARTITIONS', 8, env)),
    replicas: Math.max(1, integer('PACT_REPLICAS', 1, env)),
    journalMaxBytes: Math.max(1, integer('PACT_JOURNAL_MAX_BYTES', DEFAULT_JOURNAL_MAX_BYTES, env)),
    maxActors: Math.max(1, integer('PACT_MAX_ACTORS', 2_000, env)),
    actorIdleMs: integer('PACT_ACTOR_IDLE_MS', 60_000, env),
    verifyThreads: integer('PACT_VERIFY_THREADS', availableParallelism() > 1 ? 1 : 0, env),
    readCacheBytes: integer('PACT_READ_CACHE_BYTES', 32 * 2 ** 20, env),
    levelWriteBufferBytes: between('PACT_LEVELDB_WRITE_BUFFER_BYTES', integer('PACT_LEVELDB_WRITE_BUFFER_BYTES', 8 * 2 ** 20, env), 2 ** 16, 2 ** 30),
    offerWatchers: integer('PACT_OFFER_WATCHERS', 10_000, env),
    eventQuota: Math.max(1, integer('PACT_EVENT_QUOTA', 1_000, env)),
    pullsPerMinute: integer('PACT_RATE_LIMIT_PULLS', 120, env),
    pullWaiters: integer('PACT_PULL_WAITERS', 10_000, env),
    mockDefaultBalance: BigInt(integer('PACT_MOCK_DEFAULT_BALANCE', 1_000_000_000, env)),
    evm: evmConfig(env),
    mpp: mppConfig(env),
    commandTimeoutMs: integer('PACT_COMMAND_TIMEOUT_MS', 10_000, env),
    rateLimits: {
      writes: integer('PACT_RATE_LIMIT_WRITES', 600, env),
      pokes: integer('PACT_RATE_LIMIT_POKES', 600, env),
      lists: integer('PACT_RATE_LIMIT_LISTS', 300, env),
    },
    blobs: {
      maxBytes: integer('PACT_BLOB_MAX_BYTES', 25 * 2 ** 20, env),
      linkTtlMs: integer('PACT_BLOB_LINK_TTL_MS', 5 * 60_000, env),
      uploadsAtOnce: Math.max(1, integer('PACT_BLOB_UPLOADS_AT_ONCE', 16, env)),
      minFreeBytes: integer('PACT_BLOB_MIN_FREE_BYTES', 2 ** 30, env),
    },
    http: {
      connectionTimeoutMs: integer('PACT_CONNECTION_TIMEOUT_MS', 40_000, env),
      requestTimeoutMs: integer('PACT_REQUEST_TIMEOUT_MS', 30_000, env),
      keepAliveTimeoutMs: integer('PACT_KEEP_ALIVE_TIMEOUT_MS', 5_000, env),
      maxConnections: integer('PACT_MAX_CONNECTIONS', 10_000, env),
    },
  };
}

function creditWalletUrl(env: NodeJS.ProcessEnv): string | undefined {
  const url = publicUrl(env.PACT_CREDIT_WALLET_URL, 'PACT_CREDIT_WALLET_URL');
  if (url && !env.WALLET_INTERNAL_TOKEN) throw new Error('PACT_CREDIT_WALLET_URL needs WALLET_INTERNAL_TOKEN: the token of that wallet service\'s internal routes');
  return url;
}

/** An http(s) base URL without a trailing slash: the pages and the installer write it into what they serve. */
function publicUrl(text: string | undefined, name: string): string | undefined {
  if (!text) return undefined;
  const url = URL.canParse(text) ? new URL(text) : undefined;
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || /['"\\\s<>`$]/.test(text)) {
    throw new Error(`${name} is an http(s) base URL like https://pact.example.com, not "${text}"`);
  }
  return text.replace(/\/+$/, '');
}
