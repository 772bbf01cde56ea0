import type { JetStreamManager } from '@nats-io/jetstream';
import { JOURNAL_STREAM } from '../actors/subjects.js';
import type { JsonLevel } from '../storage/level.js';

/**
 * Which journal this node's LevelDB was built from: the PACT_JOURNAL stream's creation time, which a stream
 * made anew (another NATS, a purge by deletion) never shares. Kept beside the read model.
 */
const KEY = 'journal';

export class JournalMismatch extends Error {}

/**
 * Adopts the journal when the LevelDB data is new, and refuses to run against any other: a node that
 * silently followed an empty journal would answer from pacts the journal no longer has, and 503 every write.
 */
export async function checkJournalIdentity(jsm: JetStreamManager, level: JsonLevel, natsDescription: string): Promise<void> {
  const identity = `${JOURNAL_STREAM} created ${(await jsm.streams.info(JOURNAL_STREAM)).created}`;
  const identities = level.sublevel<string, string>('identity', { valueEncoding: 'json' });
  const known = await identities.get(KEY);
  if (known === undefined) return identities.put(KEY, identity);
  if (known === identity) return;
  throw new JournalMismatch(
    `the data directory was built from the journal "${known}", but ${natsDescription} holds "${identity}". ` +
      'Point NATS_URL at the NATS that holds the first journal, or delete the data directory\'s leveldb/ to rebuild from this one.',
  );
}
