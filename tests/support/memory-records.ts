import type { ActorRecords } from '../../actors/pact-actor.js';
import type { Committed } from '../../projection/projector.js';
import type { PactRecord } from '../../projection/read-model.js';

/**
 * A host's records of its pacts, in memory: what it committed itself, and what it was given. It vouches
 * for them as current (as a host does for the partitions it holds) unless told otherwise.
 */
export class MemoryRecords implements ActorRecords {
  readonly byId = new Map<string, PactRecord>();
  isCurrent = true;
  load = (pactId: string) => this.byId.get(pactId);
  current = () => this.isCurrent;
  committed = ({ record }: Committed) => void this.byId.set(record.pact.id, record);
  recovered = (record: PactRecord) => void this.byId.set(record.pact.id, record);
}
