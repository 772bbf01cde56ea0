import { DeliverPolicy, type JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from './acked-publisher.js';
import { jsonBytes } from './json-bytes.js';
import type { Nats } from './nats.js';
import { JournalReplayError } from './replay.js';

export interface Positioned<T> {
  seq: number;
  value: T;
}

export class ExpectedSequenceMismatch extends Error {}

/** How one kind of entry lives in a journal stream: a subject per entity, a message id per entry. */
export interface JournalLayout<E> {
  stream: string;
  subjectOf(id: string): string;
  idOf(entry: E): string;
  /** The message id: it names what the entry does, not only its position (see `append`). */
  messageIdOf(entry: E): string;
  /** The entry in a message on `subject`; undefined for anything else. */
  decode(data: Uint8Array, subject: string): E | undefined;
}

const decoder = new TextDecoder();

/** A journal message's JSON object, to be checked field by field; undefined when it is not one. */
export function messageObject<T>(data: Uint8Array): Partial<T> | undefined {
  try {
    const value: unknown = JSON.parse(decoder.decode(data));
    return typeof value === 'object' && value !== null ? (value as Partial<T>) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A journal on JetStream: the source of truth of one kind of entity. One subject per entity; appends are
 * compare-and-set on the entity's last subject sequence, so two writers can never both write.
 */
export class StreamJournal<E> {
  constructor(
    private readonly publisher: Publisher,
    private readonly jsm: JetStreamManager,
    private readonly layout: JournalLayout<E>,
  ) {}

  /**
   * Appends `entry` only if the entity's last journal sequence is still `expectedLastSeq` (0: no entry
   * yet). Resolves to the stream sequence.
   *
   * JetStream checks duplicates before the expected sequence, so a message id shared by two different
   * entries would let the second pass unwritten: the id names what the entry does. A duplicate (this very
   * entry, appended by an attempt whose answer was lost) is reported as a mismatch too: the caller then
   * reads what the journal holds instead of trusting its own copy.
   */
  async append(entry: E, expectedLastSeq: number): Promise<number> {
    const { stream, subjectOf, idOf, messageIdOf } = this.layout;
    return compareAndSet(this.publisher, { stream, subject: subjectOf(idOf(entry)), messageId: messageIdOf(entry), expectedLastSeq }, entry);
  }

  /** Entries of one entity after stream sequence `afterSeq`, in order. */
  async entriesAfter(id: string, afterSeq: number): Promise<Positioned<E>[]> {
    const entries: Positioned<E>[] = [];
    let seq = afterSeq + 1;
    for (;;) {
      const message = await streamMessage(this.jsm, this.layout.stream, { seq, next_by_subj: this.layout.subjectOf(id) });
      if (!message) return entries;
      const value = this.layout.decode(message.data, message.subject);
      if (!value) throw new JournalReplayError(`journal message ${message.seq} of ${id} is not an entry`);
      entries.push({ seq: message.seq, value });
      seq = message.seq + 1;
    }
  }
}

/**
 * Publishes `entry` on `subject` only if the subject's last sequence is still `expectedLastSeq` (0: the
 * subject holds nothing); resolves to the stream sequence. A duplicate message id is reported as a
 * mismatch too (see `StreamJournal.append`).
 */
export async function compareAndSet(
  publisher: Publisher,
  at: { stream: string; subject: string; messageId: string; expectedLastSeq: number },
  entry: unknown,
): Promise<number> {
  let ack;
  try {
    ack = await publisher.publish(at.subject, jsonBytes(entry), {
      msgID: at.messageId,
      expect: { lastSubjectSequence: at.expectedLastSeq, streamName: at.stream },
    });
  } catch (error) {
    if (/wrong last sequence/i.test(String(error))) throw new ExpectedSequenceMismatch(String(error));
    throw error;
  }
  if (ack.duplicate) throw new ExpectedSequenceMismatch(`entry ${at.messageId} was appended before`);
  return ack.seq;
}

/** A stream's message by sequence (or the next of a subject from it, or a subject's last); undefined when there is none. */
export async function streamMessage(jsm: JetStreamManager, stream: string, query: { seq: number; next_by_subj?: string } | { last_by_subj: string }) {
  try {
    return await jsm.streams.getMessage(stream, query);
  } catch (error) {
    if (/no message found|10037/i.test(String(error))) return undefined;
    throw error;
  }
}

/**
 * Where a reader of `stream` starts to miss nothing it took at or after `time` (milliseconds, by nats-server's
 * clock): the sequence before the first such message, or the stream's last sequence when none is; undefined
 * when nats-server did not say. nats-server finds it from its blocks' times, loading only the block it
 * lands in.
 */
export async function seqBeforeTime({ js, jsm }: Pick<Nats, 'js' | 'jsm'>, stream: string, time: number): Promise<number | undefined> {
  const { state } = await jsm.streams.info(stream);
  if (state.messages === 0 || Date.parse(state.last_ts) < time) return state.last_seq;
  const consumer = await js.consumers.get(stream, { deliver_policy: DeliverPolicy.StartTime, opt_start_time: new Date(time).toISOString() });
  const messages = await consumer.fetch({ max_messages: 1, expires: FIRST_WAIT_MS });
  const timer = setTimeout(() => messages.stop(), FIRST_WAIT_MS); // an ordered consumer may wait on a dead connection for good
  try {
    for await (const first of messages) return first.seq - 1;
    return undefined;
  } finally {
    clearTimeout(timer);
    messages.stop();
    consumer.delete().catch(() => undefined); // else it stays on the server, idle, for minutes
  }
}

const FIRST_WAIT_MS = 5_000;
