import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from './acked-publisher.js';
import type { PactEvent } from '../machines/pact/events.js';
import type { SignedOffer } from '../machines/offer/types.js';
import type { Pact, PactState, Payout } from '../machines/pact/types.js';
import type { SignedCall } from '../protocol/signed-call.js';
import { JournalReplayError } from './replay.js';
import { compareAndSet, messageObject, streamMessage, type Positioned } from './stream-journal.js';
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
  /** The publisher's signed offer, on the creation of a pact that accepts it (`envelope` is the acceptance). */
  offer?: SignedOffer;
  /** The pact's state after this entry, on the entries that change it (creation included): what notifications follow. */
  state?: PactState;
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
  offer?: SignedOffer;
  previous: Pact | undefined;
  next: Pact;
}): JournalEntry {
  const { commandId, event, envelope, offer, previous, next } = decision;
  const known = new Set(previous?.payouts.map((p) => p.key));
  const items = next.payouts.filter((p) => !known.has(p.key));
  return {
    pactId: next.id,
    nonce: next.stateNonce,
    commandId,
    event,
    ...(envelope ? { envelope } : {}),
    ...(offer ? { offer } : {}),
    ...(previous?.state !== next.state ? { state: next.state } : {}),
    ...(items.length > 0 ? { payouts: { rail: next.rail, asset: next.asset, items } } : {}),
  };
}

/** Whose signature asked for the entry: the evaluator for a verdict, the call's signer else; none for a poke or a payout record. */
export function signerOfEntry(entry: JournalEntry): string | undefined {
  return entry.event.type === 'verdict' ? entry.event.verdict.signer : entry.envelope?.signer;
}

/** How many of a pact's latest command ids its record keeps, to answer a redelivered command as done. */
export const RECENT_COMMANDS = 16;

/** A pact's latest command ids once `commandId` is applied: the actor and the projector keep the same. */
export const recentAfter = (recent: readonly string[], commandId: string) => [...recent, commandId].slice(-RECENT_COMMANDS);

/**
 * The entry in a journal message on `subject`; undefined for a message that is not an entry at that
 * subject's pact and position (nothing of ours writes one). Whether the machine accepts its event is the
 * replay's to say.
 */
export function decodeEntry(data: Uint8Array, subject: string): JournalEntry | undefined {
  const value = messageObject<JournalEntry>(data);
  const wellShaped =
    value !== undefined &&
    typeof value.pactId === 'string' &&
    Number.isSafeInteger(value.nonce) && value.nonce! >= 0 &&
    journalSubject(value.pactId, value.nonce!) === subject &&
    typeof value.commandId === 'string' &&
    typeof value.event === 'object' && value.event !== null && typeof value.event.type === 'string' && typeof value.event.at === 'number' &&
    (value.payouts === undefined || (typeof value.payouts === 'object' && value.payouts !== null && Array.isArray(value.payouts.items)));
  return wellShaped ? (value as JournalEntry) : undefined;
}

/**
 * The pact journal on JetStream: the source of truth. An entry is appended at its position, the subject of
 * its pact and nonce, only while that subject is empty: of two writers that decided on the same state, one
 * wins; a writer whose record is behind finds its position taken.
 */
export class Journal {
  constructor(
    private readonly publisher: Publisher,
    private readonly jsm: JetStreamManager,
  ) {}

  /**
   * Appends `entry` if its position is free; resolves to the stream sequence, or rejects with
   * `ExpectedSequenceMismatch` when the position is taken (by another entry, or by this one in an attempt
   * whose answer was lost: the message id is `<pactId>:<nonce>:<commandId>`).
   */
  append(entry: JournalEntry): Promise<number> {
    const { pactId, nonce, commandId } = entry;
    const at = { stream: JOURNAL_STREAM, subject: journalSubject(pactId, nonce), messageId: `${pactId}:${nonce}:${commandId}`, expectedLastSeq: 0 };
    return compareAndSet(this.publisher, at, entry);
  }

  /** The pact's entries from position `nonce` on, in order. */
  entriesFrom(pactId: string, nonce: number): Promise<Positioned<JournalEntry>[]> {
    return entriesFrom(this.jsm, pactId, nonce);
  }
}

/**
 * The pact's entries from position `nonce` on, in order (`positionMessages`); a message there that is not
 * an entry is a journal this code cannot trust.
 */
export async function entriesFrom(jsm: JetStreamManager, pactId: string, nonce: number): Promise<Positioned<JournalEntry>[]> {
  const entries: Positioned<JournalEntry>[] = [];
  for await (const message of positionMessages(jsm, pactId, nonce)) {
    const value = decodeEntry(message.data, message.subject);
    if (!value) throw new JournalReplayError(`journal message ${message.seq} of ${pactId} is not an entry`);
    entries.push({ seq: message.seq, value });
  }
  return entries;
}

/**
 * The journal messages at a pact's positions from `nonce` on, up to the first empty one: one lookup of a
 * subject each. (A consumer filtered on `pact.evt.<pactId>.*` would make nats-server 2.9 read every file
 * block after its start: a wildcard is matched against every subject of each block.)
 */
export async function* positionMessages(jsm: JetStreamManager, pactId: string, nonce: number) {
  for (let at = nonce; ; at++) {
    const message = await entryMessage(jsm, pactId, at);
    if (!message) return;
    yield message;
  }
}

/** The journal message at a pact's position; undefined when there is none. */
export const entryMessage = (jsm: JetStreamManager, pactId: string, nonce: number) =>
  streamMessage(jsm, JOURNAL_STREAM, { last_by_subj: journalSubject(pactId, nonce) });
