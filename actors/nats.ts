import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  DiscardPolicy,
  jetstream,
  JetStreamApiCodes,
  JetStreamApiError,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
  type StreamInfo,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { AckedPublisher, type Publisher } from './acked-publisher.js';
import { connectOptionsOf, inboxPrefixOf, NATS_ROLES, type NatsCredentials, type NatsRole, type NatsUser } from './nats-roles.js';
import { ACCESS_STREAM, ACCESS_WILDCARD, CMD_STREAM, CREDIT_HOLDS, EVENT_STREAM, EVENT_SUBJECT, JOURNAL_STREAM, LEASE_BUCKET, OFFER_STREAM, OFFER_WILDCARD, RAIL_ADDRESSES, RAILS_STREAM, WALLET_IDEMPOTENCY_STREAM, WALLET_JOURNAL_STREAM, WALLET_PAYMENTS_STREAM, WALLET_STREAM, WALLET_TOKENS_STREAM, WALLET_TXS } from './subjects.js';

const NANOS_PER_MS = 1_000_000;

/** One NATS connection with its JetStream handles. */
export interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  /** The role's JetStream publishes (journal appends, Agent Stream events, commands to another host): see acked-publisher.ts. */
  publisher: Publisher;
  jsm: JetStreamManager;
}

/** The actor host's connection, which also holds the partition leases. */
export interface HostNats extends Nats {
  leases: KV;
}

/** A connection for each role; without credentials they are all one connection. */
export type RoleConnections = Record<Exclude<NatsRole, 'host'>, Nats> & { host: HostNats };

export interface NatsOptions {
  url: string;
  /** Stream replicas: 1 on one node, 3 in a cluster. */
  replicas?: number;
  /** The journal's byte limit; when it is full, appends fail (writes answer 503) and nothing is dropped. */
  journalMaxBytes?: number;
  leaseTtlMs?: number;
  /** The NATS user to connect as; none on a server that needs no credentials. */
  user?: NatsUser;
  /**
   * Decides whether this node may use the journal it finds (its creation time; undefined: none yet) before
   * anything on NATS is created or changed. Throws to refuse.
   */
  admitJournal?: (created: string | undefined) => Promise<void>;
}

/**
 * Pull options for every consumer: a 5 s pull expiry (heartbeats every 2.5 s) instead of 30 s, so a
 * consumer whose server died is noticed and recreated within seconds.
 */
export const PULL = { expires: 5_000 } as const;

/** `url` may list several servers, comma-separated. */
export const serversOf = (url: string): string[] => url.split(',').map((s) => s.trim()).filter(Boolean);

/** Connects as the actor host and makes sure the streams and the lease bucket exist. */
export async function connectNats(options: NatsOptions): Promise<HostNats> {
  const nc = await connectAs(options.url, options.user, 'host');
  const replicas = options.replicas ?? 1;
  const jsm = await untilJetStreamAnswers(() => jetstreamManager(nc));
  await options.admitJournal?.(await untilJetStreamAnswers(() => journalCreated(jsm)));
  await untilJetStreamAnswers(() => ensureStreams(jsm, replicas, options.journalMaxBytes ?? DEFAULT_JOURNAL_MAX_BYTES));
  const leases = await new Kvm(nc).create(LEASE_BUCKET, { ttl: options.leaseTtlMs ?? 15_000, replicas, history: 1 });
  await untilJetStreamAnswers(() => ensureReplicas(jsm, `KV_${LEASE_BUCKET}`, replicas)); // create() leaves an existing bucket as it was
  return { nc, js: jetstream(nc), publisher: publisherOn(nc, 'host'), jsm, leases };
}

/** Connects as a role that only uses what the actor host set up. */
export async function connectClient(url: string, user: NatsUser | undefined, role: NatsRole): Promise<Nats> {
  const nc = await connectAs(url, user, role);
  return { nc, js: jetstream(nc), publisher: publisherOn(nc, role), jsm: await untilJetStreamAnswers(() => jetstreamManager(nc)) };
}

/** The role's AckedPublisher, made (with its subscription and timer) when it first publishes: most roles never do. */
function publisherOn(nc: NatsConnection, role: NatsRole): Publisher {
  let publisher: AckedPublisher | undefined;
  return { publish: (...args) => (publisher ??= new AckedPublisher(nc, inboxPrefixOf(role))).publish(...args) };
}

/** Every role's connection: the host's first (it sets up the streams), then one per other role. */
export async function connectRoles(options: Omit<NatsOptions, 'user'> & { credentials?: NatsCredentials }): Promise<RoleConnections> {
  const { credentials } = options;
  const host = await connectNats({ ...options, user: credentials?.host });
  if (!credentials) return { host, gateway: host, payouts: host, reader: host };
  const [gateway, payouts, reader] = await Promise.all(
    (['gateway', 'payouts', 'reader'] as const).map((role) => connectClient(options.url, credentials[role], role)),
  );
  return { host, gateway: gateway!, payouts: payouts!, reader: reader! };
}

/** The distinct connections of `roles`, for closing each once. */
export const connectionsOf = (roles: RoleConnections): NatsConnection[] => [...new Set(NATS_ROLES.map((role) => roles[role].nc))];

/** Without async traces: the client would otherwise build a stack-traced error for every request it makes. */
function connectAs(url: string, user: NatsUser | undefined, role: NatsRole): Promise<NatsConnection> {
  return connect({ servers: serversOf(url), maxReconnectAttempts: -1, noAsyncTraces: true, name: `pact-${role}`, ...connectOptionsOf(role, user) });
}

/** A cluster that has just started elects its JetStream leader first; until then, API calls fail. */
async function untilJetStreamAnswers<T>(work: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (error instanceof StreamSetupRefused || Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

export const DEFAULT_JOURNAL_MAX_BYTES = 8 * 1024 ** 3;
/** The Agent Stream keeps events seven days (the longest an event may live). */
const EVENT_RETENTION_MS = 7 * 86_400_000;
const IDEMPOTENCY_RETENTION_MS = 2 * 86_400_000;
const PAYMENT_CLAIM_RETENTION_MS = 7 * 86_400_000;
const SMALL_RECORDS_MAX_BYTES = 1024 ** 3;
const COMMANDS_MAX_BYTES = 1024 ** 3;
/** A command nobody consumed within this is of no use (its caller gave up long before): NATS drops it. */
const COMMANDS_MAX_AGE_MS = 3_600_000;

async function ensureStreams(jsm: JetStreamManager, replicas: number, journalMaxBytes: number): Promise<void> {
  await refuseUnpositionedJournal(jsm);
  await ensureStream(jsm, {
    name: CMD_STREAM,
    subjects: ['pact.cmd.>'],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: replicas,
    max_bytes: COMMANDS_MAX_BYTES,
    discard: DiscardPolicy.New,
    max_age: COMMANDS_MAX_AGE_MS * NANOS_PER_MS,
    duplicate_window: 120_000 * NANOS_PER_MS,
  });
  // Discard "new" on the journals: they are the source of truth, so a full one refuses appends, never drops entries.
  const journal = (name: string, subject: string): StreamSettings => ({
    name,
    subjects: [subject],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: replicas,
    max_bytes: journalMaxBytes,
    discard: DiscardPolicy.New,
  });
  await ensureStream(jsm, journal(JOURNAL_STREAM, 'pact.evt.>'));
  // The Agent Stream is no journal: it keeps seven days and, when full, drops its oldest events.
  await ensureStream(jsm, { ...journal(EVENT_STREAM, EVENT_SUBJECT), max_age: EVENT_RETENTION_MS * NANOS_PER_MS, discard: DiscardPolicy.Old });
  for (const [name, subject] of [[ACCESS_STREAM, ACCESS_WILDCARD], [OFFER_STREAM, OFFER_WILDCARD], [WALLET_JOURNAL_STREAM, 'wallet.evt.>']] as const) {
    await ensureStream(jsm, journal(name, subject));
  }
  // Small records (an address, a transaction, a token hash): a smaller byte limit, which JetStream reserves of
  // its disk for each stream (eight journals at 8 GiB each would not fit the store of a 78 GiB disk).
  for (const [name, ...subjects] of [[RAILS_STREAM, RAIL_ADDRESSES, CREDIT_HOLDS], [WALLET_STREAM, WALLET_TXS], [WALLET_TOKENS_STREAM, 'wallet.token.>']] as const) {
    await ensureStream(jsm, { ...journal(name, subjects[0]), subjects, max_bytes: Math.min(journalMaxBytes, SMALL_RECORDS_MAX_BYTES) });
  }
  // Idempotency records are kept two days (the spec asks for 24 hours at least), then dropped.
  await ensureStream(jsm, { ...journal(WALLET_IDEMPOTENCY_STREAM, 'wallet.idem.>'), max_bytes: Math.min(journalMaxBytes, SMALL_RECORDS_MAX_BYTES), max_age: IDEMPOTENCY_RETENTION_MS * NANOS_PER_MS, discard: DiscardPolicy.Old });
  // Payment claims matter while their authorization is usable (minutes); a week, then dropped.
  await ensureStream(jsm, { ...journal(WALLET_PAYMENTS_STREAM, 'wallet.pay.>'), max_bytes: Math.min(journalMaxBytes, SMALL_RECORDS_MAX_BYTES), max_age: PAYMENT_CLAIM_RETENTION_MS * NANOS_PER_MS, discard: DiscardPolicy.Old });
}

type StreamSettings = Parameters<JetStreamManager['streams']['add']>[0] & { name: string };

/** When PACT_JOURNAL was created, which names the journal (`runtime/journal-identity.ts`); undefined when there is none. */
export async function journalCreated(jsm: JetStreamManager): Promise<string | undefined> {
  return (await streamInfo(jsm, JOURNAL_STREAM))?.created;
}

async function streamInfo(jsm: JetStreamManager, name: string, options?: { subjects_filter: string }): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(name, options);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound) return undefined;
    throw error;
  }
}

/**
 * Creates the stream, or brings an existing one to the configured replicas, byte limit and discard policy
 * (an operator who changes PACT_REPLICAS or PACT_JOURNAL_MAX_BYTES gets them at the next start).
 */
async function ensureStream(jsm: JetStreamManager, settings: StreamSettings): Promise<void> {
  const info = await streamInfo(jsm, settings.name);
  if (!info) {
    await jsm.streams.add(settings);
    return;
  }
  const { num_replicas, max_bytes, discard, max_age, subjects } = settings;
  const wanted = { num_replicas, max_bytes, discard, subjects, ...(max_age !== undefined ? { max_age } : {}) };
  const same = (key: string, value: unknown) => JSON.stringify(info.config[key as keyof typeof info.config]) === JSON.stringify(value);
  if (Object.entries(wanted).every(([key, value]) => same(key, value))) return;
  refuseUnsafe(info, num_replicas ?? 1, max_bytes);
  await jsm.streams.update(settings.name, { ...info.config, ...wanted });
}

/** A start that must not go on: nats-server 2.9.10 would lose data to apply the settings, or only pretend to. */
export class StreamSetupRefused extends Error {}

function refuseUnsafe(info: StreamInfo, replicas: number, maxBytes: number | undefined): void {
  const { name } = info.config;
  // On a single server, 2.9.10 takes an update to more replicas and reports them, with one copy still.
  if (replicas > 1 && !info.cluster) {
    throw new StreamSetupRefused(`PACT_REPLICAS=${replicas} needs a NATS cluster, but ${name} is on a single nats-server: set PACT_REPLICAS=1 or use a cluster.`);
  }
  // Below what the stream holds, 2.9.10 trims its oldest messages whatever the discard policy, a stream
  // that had no limit before included: the journal's first entries.
  const held = info.state.bytes;
  if (maxBytes !== undefined && maxBytes < held) {
    throw new StreamSetupRefused(`${name} holds ${held} bytes; a limit of ${maxBytes} would drop its oldest entries. Keep the limit at ${held} bytes or more.`);
  }
}

/**
 * A journal with entries on `pact.evt.<pactId>`, the layout before each entry had a subject of its own: this
 * version would read none of them, and beside a node of that version two writers could both append to a
 * pact. Refused, not migrated.
 */
async function refuseUnpositionedJournal(jsm: JetStreamManager): Promise<void> {
  const info = await streamInfo(jsm, JOURNAL_STREAM, { subjects_filter: 'pact.evt.*' });
  const unpositioned = Object.keys(info?.state.subjects ?? {});
  if (unpositioned.length === 0) return;
  throw new StreamSetupRefused(
    `${JOURNAL_STREAM} holds entries on ${unpositioned[0]} and ${unpositioned.length - 1} more subjects of the layout before pact.evt.<pactId>.<nonce>, which this version cannot read: start it on a new NATS store and data directory.`,
  );
}

async function ensureReplicas(jsm: JetStreamManager, stream: string, replicas: number): Promise<void> {
  const info = await jsm.streams.info(stream);
  if (info.config.num_replicas === replicas) return;
  refuseUnsafe(info, replicas, undefined);
  await jsm.streams.update(stream, { ...info.config, num_replicas: replicas });
}

/**
 * A durable pull consumer with explicit acks. After a crash, what the dead process held unacknowledged is
 * delivered again once `ackWaitMs` passes, so keep it short and signal progress on long work.
 */
export async function ensureDurableConsumer(
  jsm: JetStreamManager,
  stream: string,
  options: { name: string; filterSubject: string; ackWaitMs: number; maxAckPending: number },
): Promise<void> {
  const config = {
    durable_name: options.name,
    filter_subject: options.filterSubject,
    ack_policy: AckPolicy.Explicit,
    deliver_policy: DeliverPolicy.All,
    ack_wait: options.ackWaitMs * NANOS_PER_MS,
    max_ack_pending: options.maxAckPending,
  };
  try {
    await jsm.consumers.add(stream, config);
  } catch {
    await jsm.consumers.update(stream, options.name, { ack_wait: config.ack_wait, max_ack_pending: config.max_ack_pending });
  }
}
