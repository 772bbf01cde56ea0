import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { ExpectedSequenceMismatch, messageObject, StreamJournal, streamMessage } from '../../actors/stream-journal.js';
import { creditHoldSubject, CREDIT_HOLDS, RAILS_STREAM } from '../../actors/subjects.js';
import type { ReserveBody } from './wallet-client.js';

/**
 * A collect on the credit rail: the reservation asked for under a collect key. It is recorded before the wallet
 * is asked (`reservationId` null) and again once the wallet answered, so a collect whose answer a crash lost is
 * still known: asking again with the same body and key finds the same reservation.
 */
export interface CreditHold {
  /** The collect key (`<pactId>:fund.<round>:<party>`). */
  key: string;
  request: ReserveBody;
  reservationId: string | null;
}

const idOf = (hold: CreditHold) => hold.key;
const messageIdOf = (hold: CreditHold) => `${creditHoldSubject(hold.key)}:${hold.reservationId ?? 'asked'}`;

function decodeHold(data: Uint8Array, subject: string): CreditHold | undefined {
  const value = messageObject<CreditHold>(data);
  const wellShaped = value !== undefined && typeof value.key === 'string' && typeof value.request === 'object' && value.request !== null && creditHoldSubject(value.key) === subject;
  return wellShaped ? (value as CreditHold) : undefined;
}

/** The credit rail's collects, on NATS (`PACT_RAILS`, a subject per collect key): what the reconciler walks. */
export class CreditHolds extends StreamJournal<CreditHold> {
  constructor(
    js: JetStreamClient,
    private readonly manager: JetStreamManager,
  ) {
    super(js, manager, { stream: RAILS_STREAM, subjectOf: creditHoldSubject, idOf, messageIdOf, decode: decodeHold });
  }

  /**
   * Records that `request` is asked for under `key`, unless it was before: then the first request stands (a
   * retry must ask the wallet with the very same body to find the same reservation).
   */
  async asking(key: string, request: ReserveBody): Promise<CreditHold> {
    const earlier = await this.latest(key);
    if (earlier) return earlier;
    const hold = { key, request, reservationId: null };
    try {
      await this.append(hold, 0);
      return hold;
    } catch (error) {
      if (!(error instanceof ExpectedSequenceMismatch)) throw error;
      return (await this.latest(key))!;
    }
  }

  /** Records the reservation the wallet answered with (once; a repeat finds it recorded). */
  async reserved(hold: CreditHold, reservationId: string): Promise<void> {
    const entries = await this.entriesAfter(hold.key, 0);
    if (entries.some((entry) => entry.value.reservationId !== null)) return;
    await this.append({ ...hold, reservationId }, entries.at(-1)!.seq).catch((error: unknown) => {
      if (!(error instanceof ExpectedSequenceMismatch)) throw error;
    });
  }

  /** The newest record of a collect key. */
  async latest(key: string): Promise<CreditHold | undefined> {
    const message = await streamMessage(this.manager, RAILS_STREAM, { last_by_subj: creditHoldSubject(key) });
    return message ? decodeHold(message.data, message.subject) : undefined;
  }

  /** Every collect key's newest record, in the order they were first asked. */
  async *all(): AsyncIterable<CreditHold> {
    const seen = new Set<string>();
    for (let seq = 1; ; ) {
      const message = await streamMessage(this.manager, RAILS_STREAM, { seq, next_by_subj: CREDIT_HOLDS });
      if (!message) return;
      seq = message.seq + 1;
      const hold = decodeHold(message.data, message.subject);
      if (!hold || seen.has(hold.key)) continue;
      seen.add(hold.key);
      yield (await this.latest(hold.key)) ?? hold;
    }
  }
}
