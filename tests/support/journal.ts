import type { JournalEntry } from '../../actors/journal.js';
import { applyEntry } from '../../actors/replay.js';
import type { Pact } from '../../machines/pact/types.js';

/** The pact after each entry of one pact's journal, replayed as the actor and projector do. */
export function replayedPacts(entries: JournalEntry[]): Pact[] {
  const pacts: Pact[] = [];
  for (const entry of entries) pacts.push(applyEntry(pacts.at(-1), entry));
  return pacts;
}
