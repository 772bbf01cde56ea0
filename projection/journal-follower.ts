import { AckPolicy, DeliverPolicy, type ConsumerMessages } from '@nats-io/jetstream';
import { PULL, type Nats } from '../actors/nats.js';
import { streamMessage } from '../actors/stream-journal.js';

/** A journal message as a follower hands it on. */
export type JournalMessage = { seq: number; subject: string; data: Uint8Array };

/** The message at `seq`, read by its sequence; undefined when the stream holds none there (deleted or aged out). */
export async function journalMessageAt(nats: Nats, stream: string, seq: number): Promise<JournalMessage | undefined> {
  const message = await streamMessage(nats.jsm, stream, { seq });
  return message ? { seq, subject: message.subject, data: message.data } : undefined;
}

const DAY_NS = 86_400 * 1e9;
/**
 * Messages a follower's receiver holds unwritten before it makes the follower wait (by returning a promise
 * from `deliver`): memory stays bounded however far behind a follower starts.
 */
export const MAX_BACKLOG = 5_000;
/** How often, with nothing delivered, the follower asks whether the journal grew past what it got. */
const TAIL_CHECK_MS = 2_000;
/** How long stop() waits for the consumer to close. */
const STOP_WAIT_MS = 2_000;

/**
 * Hands every message of a journal stream on, in stream order, none skipped and none twice, from a given
 * position. It reads through a durable consumer (replicated with the stream, so it outlives a NATS node),
 * made anew at each start from the caller's own position, without acks. A message the consumer never
 * delivers (in flight when a connection dropped) is not skipped: the journal's sequences have no holes, so
 * a gap, or a journal that grew while nothing came, is filled by reading those messages by sequence; what a
 * stream with a maximum age dropped (its first sequence moved past them) is passed over.
 */
export class JournalFollower {
  private messages: ConsumerMessages | undefined;
  /** The last sequence handed on, and when. */
  private lastArrived = 0;
  private lastArrivedAt = Date.now();
  /** Messages are taken one at a time, so that a gap is filled before what follows it. */
  private following: Promise<void> = Promise.resolve();
  private tailChecker: NodeJS.Timeout | undefined;
  private stopped = false;
  /** A receiver holds a message (the tail check waits for it rather than read around it). */
  private delivering = false;

  constructor(
    private readonly nats: Nats,
    private readonly stream: string,
    private readonly consumerName: string,
    /** Takes a message; a promise it returns holds the next message back until it settles. */
    private readonly deliver: (message: JournalMessage) => void | Promise<void>,
  ) {}

  /** Follows the stream from the message after `position`; resolves to the stream's last sequence at the start. */
  async start(position: number): Promise<number> {
    const { first_seq: first, last_seq: target } = (await this.nats.jsm.streams.info(this.stream)).state;
    // A stream with a maximum age has dropped its oldest messages: there is nothing to read before `first`.
    position = Math.max(position, first - 1);
    this.lastArrived = position;
    await this.nats.jsm.consumers.delete(this.stream, this.consumerName).catch(() => undefined);
    await this.nats.jsm.consumers.add(this.stream, {
      durable_name: this.consumerName,
      ack_policy: AckPolicy.None,
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: position + 1,
      inactive_threshold: DAY_NS, // a node that never comes back leaves no consumer behind
    });
    const consumer = await this.nats.js.consumers.get(this.stream, this.consumerName);
    this.messages = await consumer.consume(PULL);
    void (async () => {
      for await (const message of this.messages!) {
        await this.follow(() => this.fromConsumer({ seq: message.seq, subject: message.subject, data: message.data }));
      }
    })();
    this.tailChecker = setInterval(() => void this.follow(() => this.checkTail()), TAIL_CHECK_MS);
    return target;
  }

  /** Stops reading; a receiver should stop first, so that a promise it holds the follower back with settles. */
  async stop(): Promise<void> {
    clearInterval(this.tailChecker);
    this.stopped = true;
    const closed = this.messages?.close();
    await Promise.race([closed, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref())]);
  }

  private follow(step: () => Promise<void>): Promise<void> {
    this.following = this.following.then(step).catch((error) => console.error(`${this.consumerName} could not read ${this.stream}:`, String(error)));
    return this.following;
  }

  private async fromConsumer(message: JournalMessage): Promise<void> {
    if (message.seq <= this.lastArrived) return;
    if (message.seq > this.lastArrived + 1) await this.fillTo(message.seq - 1);
    await this.handOn(message);
  }

  /** Reads the messages after the last one handed on, up to `seq` (a sequence with none is passed). */
  private async fillTo(seq: number): Promise<void> {
    const { first_seq: first } = (await this.nats.jsm.streams.info(this.stream)).state;
    this.lastArrived = Math.max(this.lastArrived, Math.min(first - 1, seq)); // what aged out is not there to read
    if (this.lastArrived >= seq) return;
    console.error(`${this.consumerName} reads ${this.stream} messages ${this.lastArrived + 1}..${seq}, which its consumer did not deliver`);
    while (this.lastArrived < seq && !this.stopped) {
      const next = this.lastArrived + 1;
      const message = await journalMessageAt(this.nats, this.stream, next);
      if (message) await this.handOn(message);
      else this.lastArrived = next;
    }
  }

  /** Nothing delivered for a while, yet the journal is longer than what arrived: fetch the rest. */
  private async checkTail(): Promise<void> {
    if (this.delivering || Date.now() - this.lastArrivedAt < TAIL_CHECK_MS) return;
    const last = (await this.nats.jsm.streams.info(this.stream)).state.last_seq;
    if (last > this.lastArrived) await this.fillTo(last);
  }

  private async handOn(message: JournalMessage): Promise<void> {
    this.lastArrived = message.seq;
    this.delivering = true;
    try {
      await this.deliver(message);
    } finally {
      this.delivering = false;
      this.lastArrivedAt = Date.now(); // a receiver that held the follower back is not a consumer gone quiet
    }
  }
}
