import { JOURNAL_STREAM } from '../actors/subjects.js';
import type { JsonLevel } from '../storage/level.js';

/**
 * Which journal this node's LevelDB was built from: the PACT_JOURNAL stream's creation time, which a stream
 * made anew (another NATS, a purge by deletion) never shares. Kept beside the read model.
 */
const KEY = 'journal';

export class JournalMismatch extends Error {}

const identities = (level: JsonLevel) => level.sublevel<string, string>('identity', { valueEncoding: 'json' });
const identityOf = (created: string) => `${JOURNAL_STREAM} created ${created}`;

/**
 * Refuses to run against any journal but the one the LevelDB data was built from (`created` undefined: the
 * NATS has none), before anything on that NATS is created or changed: a node that silently followed an empty
 * journal would answer from pacts the journal no longer has, and 503 every write.
 */
export async function admitJournal(level: JsonLevel, created: string | undefined, natsDescription: string): Promise<void> {
  const known = await identities(level).get(KEY);
  if (known === undefined || (created !== undefined && known === identityOf(created))) return;
  const found = created === undefined ? `no ${JOURNAL_STREAM}` : `"${identityOf(created)}"`;
  const rebuild = created === undefined ? 'to start over with a new, empty journal there' : 'to rebuild from this one';
  throw new JournalMismatch(
    `the data directory was built from the journal "${known}", but ${natsDescription} holds ${found}. ` +
      `Point NATS_URL at the NATS that holds the first journal, or delete the data directory's leveldb/ ${rebuild}.`,
  );
}

/** Once the streams exist: LevelDB data that knows no journal yet (new, or rebuilt) adopts this one. */
export async function adoptJournal(level: JsonLevel, created: string): Promise<void> {
  if ((await identities(level).get(KEY)) === undefined) await identities(level).put(KEY, identityOf(created));
}
