import type { JetStreamManager } from '@nats-io/jetstream';
import { decodeAccessEntry, viewOf } from '../actors/access-journal.js';
import { streamMessage } from '../actors/stream-journal.js';
import { ACCESS_PARTIES, ACCESS_STREAM } from '../actors/subjects.js';

export interface PendingParty {
  party: string;
  email?: string;
  useCase?: string;
  since?: number;
}

/** The operator's queue holds at most this many (the oldest first). */
export const MAX_PENDING_LISTED = 1_000;

/**
 * The parties whose last access entry says pending, oldest first: the stream names every party subject, and
 * each one's last message says its status (one pass over the parties, no copy kept elsewhere).
 */
export async function pendingParties(jsm: JetStreamManager): Promise<PendingParty[]> {
  const info = await jsm.streams.info(ACCESS_STREAM, { subjects_filter: ACCESS_PARTIES });
  const pending: PendingParty[] = [];
  for (const subject of Object.keys(info.state.subjects ?? {})) {
    const message = await streamMessage(jsm, ACCESS_STREAM, { last_by_subj: subject });
    const entry = message && decodeAccessEntry(message.data, message.subject);
    if (entry?.kind === 'party' && entry.state.status === 'pending') pending.push({ party: entry.party, ...viewOf(entry.state) });
  }
  return pending.sort((a, b) => (a.since ?? 0) - (b.since ?? 0)).slice(0, MAX_PENDING_LISTED);
}
