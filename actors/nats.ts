import { connect, type NatsConnection } from '@nats-io/transport-node';
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  RetentionPolicy,
  StorageType,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import { Kvm, type KV } from '@nats-io/kv';
import { CMD_STREAM, JOURNAL_STREAM, LEASE_BUCKET } from './subjects.js';

const NANOS_PER_MS = 1_000_000;

export interface Nats {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  leases: KV;
}

export interface NatsOptions {
  url: string;
  /** Stream replicas: 1 on one node, 3 in a cluster. */
  replicas?: number;
  leaseTtlMs?: number;
}

/**
 * Pull options for every consumer: a 5 s pull expiry (heartbeats every 2.5 s) instead of 30 s, so a
 * consumer whose server died is noticed and recreated within seconds.
 */
export const PULL = { expires: 5_000 } as const;

/** `url` may list several servers, comma-separated. */
export const serversOf = (url: string): string[] => url.split(',').map((s) => s.trim()).filter(Boolean);

/** Connects and makes sure the streams and the lease bucket exist. */
export async function connectNats(options: NatsOptions): Promise<Nats> {
  const nc = await connect({ servers: serversOf(options.url), maxReconnectAttempts: -1, name: 'pact' });
  const replicas = options.replicas ?? 1;
  const jsm = await untilJetStreamAnswers(async () => {
    const manager = await jetstreamManager(nc);
    await ensureStreams(manager, replicas);
    return manager;
  });
  const leases = await new Kvm(nc).create(LEASE_BUCKET, { ttl: options.leaseTtlMs ?? 15_000, replicas, history: 1 });
  return { nc, js: jetstream(nc), jsm, leases };
}

/** A cluster that has just started elects its JetStream leader first; until then, API calls fail. */
async function untilJetStreamAnswers<T>(work: () => Promise<T>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

async function ensureStreams(jsm: JetStreamManager, replicas: number): Promise<void> {
  await ensureStream(jsm, {
    name: CMD_STREAM,
    subjects: ['pact.cmd.>'],
    retention: RetentionPolicy.Workqueue,
    storage: StorageType.File,
    num_replicas: replicas,
    duplicate_window: 120_000 * NANOS_PER_MS,
  });
  await ensureStream(jsm, {
    name: JOURNAL_STREAM,
    subjects: ['pact.evt.>'],
    retention: RetentionPolicy.Limits,
    storage: StorageType.File,
    num_replicas: replicas,
  });
}

async function ensureStream(jsm: JetStreamManager, config: Parameters<JetStreamManager['streams']['add']>[0]) {
  try {
    await jsm.streams.info(config.name!);
  } catch {
    await jsm.streams.add(config);
  }
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
