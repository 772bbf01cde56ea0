import type { Pact } from '../machines/pact/types.js';
import { BatchWriter } from '../storage/batch-writer.js';
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
  private readonly writer;

  constructor(level: JsonLevel) {
    this.db = level.sublevel<string, ActorSnapshot>('snapshots', { valueEncoding: 'json' });
    this.writer = new BatchWriter(this.db);
  }

  get(pactId: string): Promise<ActorSnapshot | undefined> {
    return this.db.get(pactId);
  }

  /** Snapshots of different actors written at the same time go to disk as one batch. */
  put(pactId: string, snapshot: ActorSnapshot): Promise<void> {
    return this.writer.write([{ type: 'put', key: pactId, value: snapshot }]);
  }
}
