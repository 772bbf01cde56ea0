import { DeliverPolicy } from '@nats-io/jetstream';
import { decodeEntry, entriesFrom, signerOfEntry, type JournalEntry, type JournalEvent } from '../actors/journal.js';
import type { Nats } from '../actors/nats.js';
import { JOURNAL_STREAM, pactJournalSubjects } from '../actors/subjects.js';
import type { PactState } from '../machines/pact/types.js';

/** One applied command as a live view shows it: when, who signed, the nonce after it, what it did, what it paid. */
export interface JournalRow {
  /** The journal's stream sequence: where a view that lost its connection resumes. */
  seq: number;
  nonce: number;
  at: number;
  /** The party whose signature asked for it; null for the server's own commands (deadline pokes, payouts recorded). */
  signer: string | null;
  event: Record<string, unknown> & { type: string };
  /** The pact's state after it, on the entries that change it. */
  state?: PactState;
  payouts?: { party: string; kind: string; amount: string; asset: string }[];
}

export function journalRow(seq: number, entry: JournalEntry): JournalRow {
  const { event } = entry;
  return {
    seq,
    nonce: entry.nonce,
    at: event.at,
    signer: signerOfEntry(entry) ?? null,
    event: shownEvent(event),
    ...(entry.state ? { state: entry.state } : {}),
    ...(entry.payouts
      ? { payouts: entry.payouts.items.map((p) => ({ party: p.party, kind: p.kind, amount: p.amount, asset: entry.payouts!.asset })) }
      : {}),
  };
}

/** The event less what the row says elsewhere (time, signer) and what only a verifier needs (signatures, hashes). */
function shownEvent(event: JournalEvent): JournalRow['event'] {
  switch (event.type) {
    case 'created':
      return { type: event.type, rail: event.pact.rail, parties: event.pact.parties.map((p) => p.party) };
    case 'verdict': {
      const { distribution, feeFrom, reason } = event.verdict;
      return { type: event.type, distribution, feeFrom, ...(reason ? { reason } : {}) };
    }
    default: {
      const { at: _at, party: _party, ...rest } = event as typeof event & { party?: string };
      return rest;
    }
  }
}

/**
 * A pact's journal rows after stream sequence `afterSeq`: those there now, read by position, then each as it
 * is appended, read by an ordered consumer of the pact's subjects that starts at the stream's end (any node
 * can serve it: it reads NATS, not a host). Started any earlier, that consumer would make nats-server 2.9
 * read every file block after its start (`positionMessages`). Ends when `signal` aborts.
 */
export async function* journalFeed(nats: Nats, pactId: string, afterSeq: number, signal: AbortSignal): AsyncGenerator<JournalRow> {
  const { state } = await nats.jsm.streams.info(JOURNAL_STREAM);
  let shown = afterSeq;
  for (const { seq, value } of await entriesFrom(nats.jsm, pactId, 0)) {
    if (seq <= shown) continue;
    shown = seq;
    yield journalRow(seq, value);
  }
  if (signal.aborted) return;
  const consumer = await nats.js.consumers.get(JOURNAL_STREAM, {
    filter_subjects: pactJournalSubjects(pactId),
    deliver_policy: DeliverPolicy.StartSequence,
    opt_start_seq: Math.max(state.last_seq, shown) + 1,
  });
  const messages = await consumer.consume();
  const stop = () => void messages.stop();
  signal.addEventListener('abort', stop, { once: true });
  if (signal.aborted) stop(); // aborted while the consumer was made
  try {
    for await (const message of messages) {
      const entry = decodeEntry(message.data, message.subject);
      if (entry && message.seq > shown) yield journalRow(message.seq, entry);
    }
  } finally {
    signal.removeEventListener('abort', stop);
    stop();
  }
}
