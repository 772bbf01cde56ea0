import { hash } from 'node:crypto';
import type { Nats } from '../actors/nats.js';
import { EVENT_STREAM } from '../actors/subjects.js';
import { BatchedFollower, type Afterwards } from '../projection/batched-follower.js';
import type { JournalMessage } from '../projection/journal-follower.js';
import type { Received } from './event.js';
import type { EventStore, Quota } from './event-store.js';
import { streamEventProblem } from './validate.js';
import { pactError, type PactError } from '../protocol/errors.js';
import { VerifierStopped, type Verifier } from '../protocol/verify-pool.js';

/** Bytes of unwritten messages past which the follower is held back (a batch holds a few copies of each). */
const MAX_BACKLOG_BYTES = 8 * 2 ** 20;

/**
 * Keeps the node's event store from the Agent Stream's JetStream stream, in stream order and in batches,
 * and tells the node's long polls when new events are in. Every node keeps its own, so a long poll on any
 * node wakes when an event is published through any other.
 */
export class EventProjector {
  private readonly feed: BatchedFollower;
  /** Waiting for the next events written; each is told once. */
  private readonly listeners = new Set<() => void>();
  private readonly vouched = new Set<string>();

  constructor(
    private readonly nats: Nats,
    private readonly store: EventStore,
    private readonly quota: Quota,
    private readonly verifier: Verifier,
    nodeId: string,
  ) {
    this.feed = new BatchedFollower(nats, {
      stream: EVENT_STREAM,
      consumerName: `event-projector-${nodeId}`,
      what: 'the event projector',
      write: (batch) => this.write(batch),
      maxBacklogBytes: MAX_BACKLOG_BYTES, // events are up to 32 KiB: the backlog is bounded in bytes too
    });
  }

  /** Tells `listener` once, when new events are next written; returns what stops the waiting. */
  onceEvents(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get reachedSeq(): number {
    return this.feed.reachedSeq;
  }

  async start(): Promise<void> {
    await this.store.open((await this.nats.jsm.streams.info(EVENT_STREAM)).created);
    await this.feed.start(await this.store.checkpoint());
  }

  stop(): Promise<void> {
    return this.feed.stop();
  }

  /**
   * Forgets from the store what the stream no longer holds: events older than seven days, and any before
   * the stream's first sequence (dropped by its byte limit).
   */
  async sweep(now: number): Promise<void> {
    await this.store.sweep(now);
    await this.store.sweepBefore((await this.nats.jsm.streams.info(EVENT_STREAM)).state.first_seq);
  }

  reached(seq: number, timeoutMs?: number): Promise<void> {
    return this.feed.reached(seq, timeoutMs);
  }

  /** Writes one batch of new events; the long polls waiting for new events are woken once it is reached. */
  private async write(batch: JournalMessage[]): Promise<Afterwards> {
    await this.store.putAll(await this.newEvents(batch), batch.at(-1)!.seq, this.quota);
    return () => {
      const waiting = [...this.listeners];
      this.listeners.clear();
      for (const listener of waiting) listener();
    };
  }

  /**
   * Says that this node checked or made the event in `text` (the message it is about to put on the stream,
   * byte for byte): when that message arrives it is not checked again. At most MAX_VOUCHED are remembered, by digest.
   */
  vouch(text: string): void {
    this.vouched.add(digestOf(text));
    if (this.vouched.size > MAX_VOUCHED) this.vouched.delete(this.vouched.values().next().value as string);
  }

  /** The message `text` was not appended after all. */
  unvouch(text: string): void {
    this.vouched.delete(digestOf(text));
  }

  /** The events of a batch the store does not hold yet (an id published again past NATS's duplicate window is one event). */
  private async newEvents(batch: JournalMessage[]) {
    const arrived = (await Promise.all(batch.map((message) => this.checkedArrival(message)))).filter((event) => event !== undefined);
    const seen = new Set<string>();
    return arrived.filter(({ received: { event } }) => !seen.has(event.id) && this.store.seqOf(event.id) === undefined && seen.add(event.id));
  }

  /** The event a message holds, when it is one the stream takes; the check's verifier failing throws (the batch is retried). */
  private async checkedArrival({ seq, data }: JournalMessage): Promise<{ seq: number; received: Received; text: string } | undefined> {
    const text = decoder.decode(data);
    const received = parsed(text);
    // Anyone allowed to publish on NATS could put anything here: each event is checked as the gateway checks
    // it, but for the messages this node checked and published itself.
    const refused = this.vouched.delete(digestOf(text))
      ? undefined
      : received && Number.isSafeInteger(received.receivedAt) && received.receivedAt! > 0
        ? await checked(received.event, received.receivedAt!, this.quota.exempt, this.verifier)
        : pactError('invalid_event', 'not an event');
    if (refused) {
      console.error(`event projector skips message ${seq}: ${refused.message}`);
      return undefined;
    }
    return { seq, received: received as Received, text: JSON.stringify(received!.event) };
  }
}

const decoder = new TextDecoder();
/** What the vouched set keeps of a message: its SHA-256, so that memory does not grow with message sizes. */
const digestOf = (text: string) => hash('sha256', text, 'base64');
/** Messages this node published and vouched for that it remembers; more are checked when they arrive, which costs time only. */
const MAX_VOUCHED = 10_000;

function parsed(text: string): Partial<Received> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as Partial<Received>) : undefined;
  } catch {
    return undefined;
  }
}

/** The gateway's check, made safe for whatever NATS brings: a check that throws refuses the message (but a stopped verifier is not the message's fault). */
async function checked(event: unknown, receivedAt: number, serverParty: string, verifier: Verifier): Promise<PactError | undefined> {
  try {
    return await streamEventProblem(event, receivedAt, serverParty, verifier);
  } catch (error) {
    if (error instanceof VerifierStopped) throw error;
    return pactError('invalid_event', String(error));
  }
}
