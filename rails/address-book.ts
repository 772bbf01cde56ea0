import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from '../actors/acked-publisher.js';
import { ExpectedSequenceMismatch, messageObject, StreamJournal, streamMessage } from '../actors/stream-journal.js';
import { bindingId, RAILS_STREAM, railAddressSubject } from '../actors/subjects.js';
import type { SignedCall } from '../protocol/signed-call.js';

/** A party's payout address on a rail, with the signed call that bound it (so anyone can check who asked). */
export interface BoundAddress {
  rail: string;
  party: string;
  address: string;
  at: number;
  call: SignedCall;
}

export type Binding = { bound: BoundAddress; fresh: boolean } | { conflict: BoundAddress };

const idOf = (binding: BoundAddress) => bindingId(binding.rail, binding.party);

/** The binding in a message on `subject`; undefined for anything that is not one of that subject's. */
function decodeBinding(data: Uint8Array, subject: string): BoundAddress | undefined {
  const value = messageObject<BoundAddress>(data);
  const wellShaped =
    value !== undefined && typeof value.rail === 'string' && typeof value.party === 'string' && typeof value.address === 'string' &&
    railAddressSubject(bindingId(value.rail, value.party)) === subject;
  return wellShaped ? (value as BoundAddress) : undefined;
}

/**
 * Payout addresses on NATS (`PACT_RAILS`), a journal with one subject per rail and party whose only entry is the
 * first binding: it is appended expecting the subject empty, and its message id names the subject, so a second
 * append (a retry, or another address) is never written; the book then reads the first and compares.
 */
export class RailAddressBook extends StreamJournal<BoundAddress> {
  constructor(
    publisher: Publisher,
    private readonly manager: JetStreamManager,
  ) {
    super(publisher, manager, { stream: RAILS_STREAM, subjectOf: railAddressSubject, idOf, messageIdOf: (binding) => railAddressSubject(idOf(binding)), decode: decodeBinding });
  }

  async bind(wanted: BoundAddress): Promise<Binding> {
    try {
      await this.append(wanted, 0);
      return { bound: wanted, fresh: true };
    } catch (error) {
      if (!(error instanceof ExpectedSequenceMismatch)) throw error;
    }
    const first = await this.addressOf(wanted.rail, wanted.party);
    if (!first) throw new Error(`the binding ${idOf(wanted)} was refused yet holds no address`);
    return first.address === wanted.address ? { bound: first, fresh: false } : { conflict: first };
  }

  /** The address `party` bound on `rail`, if any. */
  async addressOf(rail: string, party: string): Promise<BoundAddress | undefined> {
    const message = await streamMessage(this.manager, RAILS_STREAM, { last_by_subj: railAddressSubject(bindingId(rail, party)) });
    return message ? decodeBinding(message.data, message.subject) : undefined;
  }
}
