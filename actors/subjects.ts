/** Names on the NATS side. Documented for internal subscribers in docs/NATS.md. */
export const CMD_STREAM = 'PACT_CMD';
export const JOURNAL_STREAM = 'PACT_JOURNAL';
export const LEASE_BUCKET = 'PACT_LEASES';

export const commandSubject = (partition: number) => `pact.cmd.${partition}`;
export const journalSubject = (pactId: string) => `pact.evt.${pactId}`;
export const JOURNAL_WILDCARD = 'pact.evt.>';

/** Consumers: one per partition for the actor hosts, one for the payout worker. */
export const partitionConsumer = (partition: number) => `actor-host-p${partition}`;
export const PAYOUT_CONSUMER = 'payout-worker';

/** partition = FNV-1a(pactId) mod P: stable across processes and restarts. */
export function partitionOf(pactId: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < pactId.length; i++) {
    hash ^= pactId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
