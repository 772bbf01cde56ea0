import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from '../../actors/acked-publisher.js';
import { ExpectedSequenceMismatch, messageObject, StreamJournal, streamMessage, type Positioned } from '../../actors/stream-journal.js';
import { creditHoldSubject, CREDIT_HOLDS, RAILS_STREAM } from '../../actors/subjects.js';
import type { ReserveBody } from './wallet-client.js';

/**
 * A collect on the credit rail: the reservation asked for under a collect key, recorded before the wallet is asked
 * (an ask: `reservationId` and `refused` null), again once it answered with a hold, or with why it refused. A fund
 * after a refusal asks again, and a hold answered after a refusal is recorded after an ask of its own. A collect
 * whose answer a crash lost is still known: asking again with the same body and key finds the same reservation.
 */
export interface CreditHold {
  /** The collect key (`<pactId>:fund.<round>:<party>`). */
  key: string;
  request: ReserveBody;
  reservationId: string | null;
  /** The wallet's refusal of the last ask (not enough credit, a suspended wallet): no hold was made. */
  refused: string | null;
  /** How many records of this key came before this one (its message id, so each record is written once). */
  attempt: number;
}

/** A record before `append` numbers it. */
type Unnumbered = Omit<CreditHold, 'attempt'>;
const unnumbered = ({ attempt: _attempt, ...record }: CreditHold): Unnumbered => record;

/**
 * An ask: a key's first record, or one after a refusal (its request asked again). Each is a place among the
 * rail's collects, answered by the key's records after it (a reservation, or a refusal); none follows a reservation.
 */
const isAsk = (hold: CreditHold) => hold.reservationId === null && hold.refused === null;

/** A place among the credit rail's collects: an ask at its stream sequence, and the record that answered it (`answerOf`). */
export interface AskPlace {
  seq: number;
  ask: CreditHold;
  answer: CreditHold | undefined;
}

const idOf = (hold: CreditHold) => hold.key;
const messageIdOf = (hold: CreditHold) => `${creditHoldSubject(hold.key)}:${hold.attempt}`;

function decodeHold(data: Uint8Array, subject: string): CreditHold | undefined {
  const value = messageObject<CreditHold>(data);
  const wellShaped =
    value !== undefined && typeof value.key === 'string' && typeof value.request === 'object' && value.request !== null && Number.isSafeInteger(value.attempt) && creditHoldSubject(value.key) === subject;
  return wellShaped ? (value as CreditHold) : undefined;
}

/** The credit rail's collects, on NATS (`PACT_RAILS`, a subject per collect key): what the reconciler walks. */
export class CreditHolds extends StreamJournal<CreditHold> {
  constructor(
    publisher: Publisher,
    private readonly manager: JetStreamManager,
  ) {
    super(publisher, manager, { stream: RAILS_STREAM, subjectOf: creditHoldSubject, idOf, messageIdOf, decode: decodeHold });
  }

  /**
   * Records that `request` is asked for under `key`, unless it was before: then the first request stands (a
   * retry must ask the wallet with the very same body to find the same reservation).
   */
  async asking(key: string, request: ReserveBody): Promise<CreditHold> {
    const last = await this.last(key);
    if (last && last.value.refused === null) return last.value;
    return this.follow(key, last, (previous) => ({ key, request: previous?.request ?? request, reservationId: null, refused: null }));
  }

  /**
   * Records the reservation the wallet answered with (once). One that comes after a refusal (an ask answered
   * twice at once, the first refused) is recorded after an ask of its own, so that it is a place of its own.
   */
  async reserved(hold: CreditHold, reservationId: string): Promise<void> {
    for (;;) {
      const last = await this.last(hold.key);
      if (!last || last.value.reservationId) return;
      const answer = { ...last.value, reservationId, refused: null };
      const record = last.value.refused === null ? answer : { ...last.value, refused: null };
      if ((await this.appended(record, last)) && record === answer) return;
    }
  }

  /**
   * Records that the wallet refused the ask `hold`, while that ask is still the key's latest record: a refusal
   * that comes late (after a reservation, or once the key was asked again) answers nothing any more.
   */
  async refused(hold: CreditHold, reason: string): Promise<void> {
    const answers = (previous: CreditHold | undefined) => previous !== undefined && isAsk(previous) && previous.attempt === hold.attempt;
    await this.follow(hold.key, await this.last(hold.key), (previous) => (answers(previous) ? { ...unnumbered(hold), refused: reason } : undefined));
  }

  /** The newest record of a collect key. */
  async latest(key: string): Promise<CreditHold | undefined> {
    return (await this.last(key))?.value;
  }

  /** The asks from stream sequence `from` on, in order, each with its answer. */
  async *asks(from: number): AsyncIterable<AskPlace> {
    for (let seq = Math.max(from, 1); ; ) {
      const message = await streamMessage(this.manager, RAILS_STREAM, { seq, next_by_subj: CREDIT_HOLDS });
      if (!message) return;
      seq = message.seq + 1;
      const place = await this.placeIn(message);
      if (place) yield place;
    }
  }

  /** The ask at stream sequence `seq` with its answer; undefined when no ask is there. */
  async askAt(seq: number): Promise<AskPlace | undefined> {
    const message = seq > 0 ? await streamMessage(this.manager, RAILS_STREAM, { seq }) : undefined;
    return message ? this.placeIn(message) : undefined;
  }

  /** The ask `message` holds, with its answer; undefined when it holds none. */
  private async placeIn(message: { seq: number; data: Uint8Array; subject: string }): Promise<AskPlace | undefined> {
    const hold = decodeHold(message.data, message.subject);
    return hold && isAsk(hold) ? { seq: message.seq, ask: hold, answer: await this.answerOf(message.seq, hold.key) } : undefined;
  }

  /**
   * What answered the ask at stream sequence `seq`: of the key's records after it, up to its next ask, a
   * reservation, else a refusal; undefined while there is neither. A reservation is looked for past a refusal
   * because streams written before `reserved` put an ask between them hold one right after a refusal.
   */
  private async answerOf(seq: number, key: string): Promise<CreditHold | undefined> {
    let refusal: CreditHold | undefined;
    for (let next = seq + 1; ; ) {
      const message = await streamMessage(this.manager, RAILS_STREAM, { seq: next, next_by_subj: creditHoldSubject(key) });
      if (!message) return refusal;
      next = message.seq + 1;
      const record = decodeHold(message.data, message.subject);
      if (!record) continue;
      if (isAsk(record)) return refusal;
      if (record.reservationId) return record;
      refusal = record;
    }
  }

  private async last(key: string): Promise<Positioned<CreditHold> | undefined> {
    const message = await streamMessage(this.manager, RAILS_STREAM, { last_by_subj: creditHoldSubject(key) });
    const value = message && decodeHold(message.data, message.subject);
    return value ? { seq: message.seq, value } : undefined;
  }

  /**
   * Appends what `next` makes of the key's last record (nothing when it answers undefined), compare-and-set on
   * that record: when another writer got there first, its record is the answer.
   */
  private async follow(key: string, last: Positioned<CreditHold> | undefined, next: (previous: CreditHold | undefined) => Unnumbered | undefined): Promise<CreditHold> {
    const record = next(last?.value);
    if (!record) return last!.value;
    return (await this.appended(record, last)) ?? (await this.latest(key))!;
  }

  /** `record`, numbered and appended right after `last` (compare-and-set); undefined when another record came first. */
  private async appended(record: Unnumbered, last: Positioned<CreditHold> | undefined): Promise<CreditHold | undefined> {
    const numbered = { ...record, attempt: last ? last.value.attempt + 1 : 0 };
    try {
      await this.append(numbered, last?.seq ?? 0);
      return numbered;
    } catch (error) {
      if (!(error instanceof ExpectedSequenceMismatch)) throw error;
      return undefined;
    }
  }
}
