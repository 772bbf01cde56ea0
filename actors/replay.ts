import { evolve } from '../machines/pact/evolve.js';
import type { Pact } from '../machines/pact/types.js';
import type { JournalEntry } from './journal.js';

export class JournalReplayError extends Error {}

/**
 * The pact after `entry`: its initial record for the first entry, else the previous pact with the entry's
 * event replayed through the machine. The actor, the projector and the audit all rebuild pacts this way.
 * An entry the machine refuses, or that lands on another nonce, is a journal this code cannot trust: it
 * throws rather than guess.
 */
export function applyEntry(pact: Pact | undefined, entry: JournalEntry): Pact {
  const at = `${entry.pactId} nonce ${entry.nonce}`;
  if (entry.event.type === 'created') {
    if (pact) throw new JournalReplayError(`${at}: a second creation`);
    const created = entry.event.pact;
    if (entry.nonce !== 0 || created?.id !== entry.pactId || created.stateNonce !== 0 || !Array.isArray(created.parties)) {
      throw new JournalReplayError(`${at}: not a pact's initial record`);
    }
    return created;
  }
  if (!pact) throw new JournalReplayError(`${at}: an event before the pact's creation`);
  const next = evolve(pact, entry.event);
  if (!next) throw new JournalReplayError(`${at}: the machine refuses the journaled ${entry.event.type}`);
  if (next.stateNonce !== entry.nonce) throw new JournalReplayError(`${at}: replay reaches nonce ${next.stateNonce}`);
  return next;
}
