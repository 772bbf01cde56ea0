import type { Pact } from '../machines/pact/types.js';
import type { JsonLevel } from '../storage/level.js';

/** What an actor needs to come back: the pact, its journal position, the ids of its latest commands. */
export interface ActorSnapshot {
  seq: number;
  pact: Pact;
  recentCommands: string[];
}

/** Actor snapshots in LevelDB. Losing them costs only time: the journal rebuilds every pact. */
export class SnapshotStore {
  private readonly db;

  constructor(level: JsonLevel) {
    this.db = level.sublevel<string, ActorSnapshot>('snapshots', { valueEncoding: 'json' });
  }

  get(pactId: string): Promise<ActorSnapshot | undefined> {
    return this.db.get(pactId);
  }

  put(pactId: string, snapshot: ActorSnapshot): Promise<void> {
    return this.db.put(pactId, snapshot);
  }
}
