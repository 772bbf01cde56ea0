import { DeliverPolicy } from '@nats-io/jetstream';
import { PULL, type Nats } from '../actors/nats.js';
import { journalMessageAt, MAX_BACKLOG, type JournalMessage } from './journal-follower.js';
import { tellEach } from './listeners.js';

/**
 * The messages another reader of a journal stream takes (the projector's follower): each once, in stream
 * order, with no gap, as it takes them. `position` is the last one taken so far.
 */
export interface JournalTap {
  readonly position: number;
  /** Tells `listener` of each message from now on, until the function it returns is called. */
  listen(listener: (message: JournalMessage) => void): () => void;
}

/** The tap a reader keeps: it `tell`s each message it takes, after `from` (where it started) if it told none. */
export class MessageTap implements JournalTap {
  position = 0;
  private readonly listeners = new Set<(message: JournalMessage) => void>();

  from(position: number): void {
    this.position = Math.max(this.position, position);
  }

  listen(listener: (message: JournalMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Tells every listener (`tellEach`: one that throws keeps neither the others nor the teller from going on). */
  tell(message: JournalMessage): void {
    this.position = message.seq;
    tellEach(this.listeners, message, `journal message ${message.seq}`);
  }
}

/**
 * Hands every message of a journal stream on, in stream order, none skipped and none twice, from a given
 * position, as `JournalFollower` does, but with no consumer of its own: it hears what a tap takes, so that
 * nats-server delivers each message to the node once. What it has not heard (what came before it started,
 * or what it let pass while its receiver held it back with `maxHeard` messages waiting, for a tap is never
 * held back) it reads from the stream, then goes on with what it heard. So it moves only as far as the tap
 * has: a tap held back holds it back too.
 */
export class TappedFollower {
  /** The last sequence handed on. */
  private handed = 0;
  /** Heard and not handed on yet, in stream order. */
  private heard: JournalMessage[] = [];
  private pumping: Promise<void> | undefined;
  private stopped = false;
  private unlisten: (() => void) | undefined;

  constructor(
    private readonly nats: Nats,
    private readonly stream: string,
    /** Names the reader in the log. */
    private readonly what: string,
    private readonly tap: JournalTap,
    /** Takes a message; a promise it returns holds the next message back until it settles. */
    private readonly deliver: (message: JournalMessage) => void | Promise<void>,
    /** Messages heard and waiting past which what it hears is let pass (and read from the stream later). */
    private readonly maxHeard = MAX_BACKLOG,
  ) {}

  /** Follows the stream from the message after `position`. */
  start(position: number): void {
    this.handed = position;
    this.unlisten = this.tap.listen((message) => this.hear(message));
    this.pump();
  }

  /** Hands nothing more on; resolves once the message being handed on is taken. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    await this.pumping;
  }

  private hear(message: JournalMessage): void {
    if (this.stopped || this.heard.length >= this.maxHeard) return; // read from the stream once what waits is handed on
    this.heard.push(message);
    this.pump();
  }

  /** Starts handing on unless that runs; once it ends, what arrived as it ended starts it again. */
  private pump(): void {
    if (this.pumping || this.stopped) return;
    this.pumping = this.handOnAll().then(
      () => {
        this.pumping = undefined;
        if (this.behind()) this.pump();
      },
      (error) => {
        console.error(`${this.what} could not read ${this.stream}; trying again in a second:`, String(error));
        this.pumping = undefined;
        setTimeout(() => this.pump(), RETRY_MS).unref();
      },
    );
  }

  /** Something heard, or taken by the tap, is not handed on yet. */
  private behind(): boolean {
    return this.heard.length > 0 || this.tap.position > this.handed;
  }

  private async handOnAll(): Promise<void> {
    while (!this.stopped) {
      const next = this.heard[0];
      if (next && next.seq <= this.handed) this.heard.shift();
      else if (next && next.seq === this.handed + 1) await this.handOn(this.heard.shift()!);
      else if ((next ? next.seq - 1 : this.tap.position) > this.handed) await this.readUpTo(next ? next.seq - 1 : this.tap.position);
      else return;
    }
  }

  /**
   * Reads what follows the last message handed on, through `upTo` at least, from the stream: in chunks
   * through an ordered consumer (a node back after an hour in a busy cluster may be millions behind), then,
   * when a chunk brings nothing, the next sequence by itself (it may be gone, or NATS may be down).
   */
  private async readUpTo(upTo: number): Promise<void> {
    const consumer = await this.nats.js.consumers.get(this.stream, { deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: this.handed + 1 });
    try {
      while (this.handed < upTo && !this.stopped) {
        const before = this.handed;
        const messages = await consumer.fetch({ ...PULL, max_messages: Math.min(upTo - this.handed, READ_CHUNK) });
        for await (const message of messages) {
          if (this.stopped) break;
          if (message.seq > this.handed) await this.handOn({ seq: message.seq, subject: message.subject, data: message.data });
        }
        if (this.handed === before) return await this.readNext();
      }
    } finally {
      consumer.delete().catch(() => undefined); // else it stays on the server, idle, for minutes
    }
  }

  /** Reads the message after the last one handed on by its sequence; one that is not there is passed. */
  private async readNext(): Promise<void> {
    const seq = this.handed + 1;
    const message = await journalMessageAt(this.nats, this.stream, seq);
    if (message) await this.handOn(message);
    else this.handed = Math.max(this.handed, seq);
  }

  private async handOn(message: JournalMessage): Promise<void> {
    this.handed = message.seq;
    await this.deliver(message);
  }
}

const RETRY_MS = 1_000;
/** Messages fetched at a time when reading the stream. */
const READ_CHUNK = 500;
