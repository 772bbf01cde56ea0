import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import type { PactEvent } from '../machines/pact/events.js';
import type { Pact, Payout } from '../machines/pact/types.js';
import type { SignedCall } from '../protocol/signed-call.js';
import { JournalReplayError } from './replay.js';
import { JOURNAL_STREAM, journalSubject } from './subjects.js';

/** A pact's first entry carries its initial record: the creator's spec plus what the server pinned. */
export type CreatedEvent = { type: 'created'; at: number; pact: Pact };
export type JournalEvent = PactEvent | CreatedEvent;

/** Payouts an entry planned, with what the payout worker needs to execute them without the pact. */
export interface PlannedPayouts {
  rail: string;
  asset: string;
  items: Payout[];
}

/**
 * One applied command: what changed (the event), the signed call that asked for it, and the payouts it
 * planned. Never the whole record: an entry stays small however large the pact, and replaying the events
 * through the machine rebuilds the pact. The envelope lets anyone re-verify the entry from the journal alone
 * (`npm run audit`); entries without one are the unsigned internal commands (poke, payouts recorded) and
 * verdicts, whose event carries the evaluator's signed verdict.
 */
export interface JournalEntry {
  pactId: string;
  /** The pact's stateNonce after this entry. */
  nonce: number;
  commandId: string;
  event: JournalEvent;
  envelope?: SignedCall;
  payouts?: PlannedPayouts;
}

/**
 * The entry of `event`, which led from `previous` to `next` (the actor's decision), with the payouts it
 * planned: those `next` added.
 */
export function entryOf(decision: {
  commandId: string;
  event: JournalEvent;
  envelope?: SignedCall;
  previous: Pact | undefined;
  next: Pact;
}): JournalEntry {
  const { commandId, event, envelope, previous, next } = decision;
  const known = new Set(previous?.payouts.map((p) => p.key));
  const items = next.payouts.filter((p) => !known.has(p.key));
  return {
    pactId: next.id,
    nonce: next.stateNonce,
    commandId,
    event,
    ...(envelope ? { envelope } : {}),
    ...(items.length > 0 ? { payouts: { rail: next.rail, asset: next.asset, items } } : {}),
  };
}

/** How many of a pact's latest command ids its record keeps, to answer a redelivered command as done. */
export const RECENT_COMMANDS = 16;

/** A pact's latest command ids once `commandId` is applied: the actor and the projector keep the same. */
export const recentAfter = (recent: readonly string[], commandId: string) => [...recent, commandId].slice(-RECENT_COMMANDS);

export interface Positioned<T> {
  seq: number;
  value: T;
}

export class ExpectedSequenceMismatch extends Error {}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const encodeEntry = (entry: JournalEntry) => encoder.encode(JSON.stringify(entry));
/**
 * The entry in a journal message on `subject`; undefined for a message that is not an entry of that
 * subject's pact (nothing of ours writes one). Whether the machine accepts its event is the replay's to say.
 */
export function decodeEntry(data: Uint8Array, subject: string): JournalEntry | undefined {
  let value: Partial<JournalEntry>;
  try {
    value = JSON.parse(decoder.decode(data)) as Partial<JournalEntry>;
  } catch {
    return undefined;
  }
  const wellShaped =
    typeof value === 'object' && value !== null &&
    typeof value.pactId === 'string' && journalSubject(value.pactId) === subject &&
    Number.isSafeInteger(value.nonce) && value.nonce! >= 0 &&
    typeof value.commandId === 'string' &&
    typeof value.event === 'object' && value.event !== null && typeof value.event.type === 'string' && typeof value.event.at === 'number' &&
    (value.payouts === undefined || (typeof value.payouts === 'object' && value.payouts !== null && Array.isArray(value.payouts.items)));
  return wellShaped ? (value as JournalEntry) : undefined;
}

/** The pact journal on JetStream: the source of truth. One subject per pact; appends are compare-and-set. */
export class Journal {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {}

  /**
   * Appends `entry` only if the pact's last journal sequence is still `expectedLastSeq` (0: no entry yet),
   * so two hosts that both think they own a pact can never both write. Resolves to the stream sequence.
   *
   * The message id names the command as well as the nonce: JetStream checks duplicates before the expected
   * sequence, so an id shared by two different entries would let the second pass unwritten. A duplicate
   * (this very command, appended before by an attempt whose answer was lost) is reported as a mismatch too:
   * the caller then reads what the journal holds instead of trusting its own copy.
   */
  async append(entry: JournalEntry, expectedLastSeq: number): Promise<number> {
    let ack;
    try {
      ack = await this.js.publish(journalSubject(entry.pactId), encodeEntry(entry), {
        msgID: `${entry.pactId}:${entry.nonce}:${entry.commandId}`,
        expect: { lastSubjectSequence: expectedLastSeq, streamName: JOURNAL_STREAM },
      });
    } catch (error) {
      if (/wrong last sequence/i.test(String(error))) throw new ExpectedSequenceMismatch(String(error));
      throw error;
    }
    if (ack.duplicate) throw new ExpectedSequenceMismatch(`entry ${entry.pactId}:${entry.nonce} was appended before`);
    return ack.seq;
  }

  /** Entries of one pact after stream sequence `afterSeq`, in order. */
  async entriesAfter(pactId: string, afterSeq: number): Promise<Positioned<JournalEntry>[]> {
    const entries: Positioned<JournalEntry>[] = [];
    let seq = afterSeq + 1;
    for (;;) {
      const message = await this.getMessage({ seq, next_by_subj: journalSubject(pactId) });
      if (!message) return entries;
      const value = decodeEntry(message.data, message.subject);
      if (!value) throw new JournalReplayError(`journal message ${message.seq} of ${pactId} is not an entry`);
      entries.push({ seq: message.seq, value });
      seq = message.seq + 1;
    }
  }

  private getMessage(query: { seq: number; next_by_subj: string }) {
    return journalMessage(this.jsm, query);
  }
}

/** A journal message by sequence (or the next of a subject from it); undefined when there is none. */
export async function journalMessage(jsm: JetStreamManager, query: { seq: number; next_by_subj?: string }) {
  try {
    return await jsm.streams.getMessage(JOURNAL_STREAM, query);
  } catch (error) {
    if (/no message found|10037/i.test(String(error))) return undefined;
    throw error;
  }
}
