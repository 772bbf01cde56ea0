/** A JetStream connection for the bench's own measurements of nats-server, closed after `use`. */
import { connect } from '@nats-io/transport-node';
import { jetstream, jetstreamManager, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { using } from './cleanup.js';

export function withJetStream<T>(url: string, use: (js: JetStreamClient, jsm: JetStreamManager) => Promise<T>): Promise<T> {
  return using(
    () => connect({ servers: url }),
    (nc) => nc.close(),
    async (nc) => use(jetstream(nc), await jetstreamManager(nc)),
  );
}
