import type { JetStreamClient, JetStreamManager } from '@nats-io/jetstream';
import { messageObject, streamMessage } from '../actors/stream-journal.js';
import { RAILS_STREAM, railAddressSubject } from '../actors/subjects.js';
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

const encoder = new TextEncoder();

/**
 * Payout addresses on NATS (`PACT_RAILS`), one subject per rail and party. First write wins across every node:
 * the append expects the subject to be empty, and its message id names the subject, so a second append (a
 * retry, or another address) is never written; it reads the first and compares.
 */
export class RailAddressBook {
  constructor(
    private readonly js: JetStreamClient,
    private readonly jsm: JetStreamManager,
  ) {}

  async bind(wanted: BoundAddress): Promise<Binding> {
    const subject = railAddressSubject(wanted.rail, wanted.party);
    try {
      const ack = await this.js.publish(subject, encoder.encode(JSON.stringify(wanted)), {
        msgID: subject,
        expect: { lastSubjectSequence: 0, streamName: RAILS_STREAM },
      });
      if (!ack.duplicate) return { bound: wanted, fresh: true };
    } catch (error) {
      if (!/wrong last sequence/i.test(String(error))) throw error;
    }
    const first = await this.addressOf(wanted.rail, wanted.party);
    if (!first) throw new Error(`${subject} refused an append yet holds no address`);
    return first.address === wanted.address ? { bound: first, fresh: false } : { conflict: first };
  }

  /** The address `party` bound on `rail`, if any. */
  async addressOf(rail: string, party: string): Promise<BoundAddress | undefined> {
    const message = await streamMessage(this.jsm, RAILS_STREAM, { last_by_subj: railAddressSubject(rail, party) });
    return message ? (messageObject<BoundAddress>(message.data) as BoundAddress | undefined) : undefined;
  }
}
