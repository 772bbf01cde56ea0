import type { Nats } from '../actors/nats.js';
import { messageObject } from '../actors/stream-journal.js';
import { EVENT_STREAM } from '../actors/subjects.js';
import { JournalFollower, type JournalMessage } from '../projection/journal-follower.js';
import { PositionWaiters } from '../projection/position-waiters.js';
import type { EventStore, Quota, Received } from './event-store.js';
import { streamEventProblem } from './validate.js';
import { pactError } from '../protocol/errors.js';

const RETRY_MS = 1_000;

/**
 * Keeps the node's event store from the Agent Stream's JetStream stream, in stream order and in batches,
 * and tells the node's long polls when new events are in. Every node keeps its own, so a long poll on any
 * node wakes when an event is published through any other.
 */
export class EventProjector {
  private readonly follower: JournalFollower;
  private readonly waiters = new PositionWaiters();
  /** Waiting for the next events written; each is told once. */
  private readonly listeners = new Set<() => void>();
  private arrivals: JournalMessage[] = [];
  private writing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly nats: Nats,
    private readonly store: EventStore,
    private readonly quota: Quota,
    nodeId: string,
  ) {
    this.follower = new JournalFollower(nats, EVENT_STREAM, `event-projector-${nodeId}`, (message) => this.arrive(message));
  }

  /** Tells `listener` once, when new events are next written; returns what stops the waiting. */
  onceEvents(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get reachedSeq(): number {
    return this.waiters.reachedSeq;
  }

  async start(): Promise<void> {
    await this.store.open((await this.nats.jsm.streams.info(EVENT_STREAM)).created);
    const position = await this.store.checkpoint();
    this.waiters.reach(position);
    await this.reached(await this.follower.start(position));
  }

  async stop(): Promise<void> {
    await this.follower.stop();
    this.stopped = true;
    await this.writing;
  }

  reached(seq: number, timeoutMs?: number): Promise<void> {
    return this.waiters.reached(seq, timeoutMs);
  }

  private arrive(message: JournalMessage): void {
    this.arrivals.push(message);
    if (this.writing || this.stopped) return;
    this.writing = this.writeArrivals().finally(() => (this.writing = undefined));
  }

  private async writeArrivals(): Promise<void> {
    while (this.arrivals.length > 0 && !this.stopped) {
      const batch = this.arrivals;
      this.arrivals = [];
      const position = batch.at(-1)!.seq;
      try {
        await this.store.putAll(await this.newEvents(batch), position, this.quota);
      } catch (error) {
        console.error('event projector could not write; retrying in a second:', String(error));
        this.arrivals = [...batch, ...this.arrivals];
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      this.waiters.reach(position);
      const waiting = [...this.listeners];
      this.listeners.clear();
      for (const listener of waiting) listener();
    }
  }

  /** The events of a batch the store does not hold yet (an id published again past NATS's duplicate window is one event). */
  private async newEvents(batch: JournalMessage[]) {
    const seen = new Set<string>();
    const events: { seq: number; received: Received; text: string }[] = [];
    for (const message of batch) {
      const received = messageObject<Received>(message.data);
      // Anyone allowed to publish on NATS could put anything here: each event is checked as the gateway checks it.
      const refused = received && typeof received.receivedAt === 'number' ? checked(received.event, received.receivedAt, this.quota.exempt) : pactError('invalid_event', 'not an event');
      if (refused) {
        console.error(`event projector skips message ${message.seq}: ${refused.message}`);
        continue;
      }
      const id = received!.event!.id;
      if (seen.has(id) || (await this.store.seqOf(id)) !== undefined) continue;
      seen.add(id);
      events.push({ seq: message.seq, received: received as Received, text: JSON.stringify(received!.event) });
    }
    return events;
  }
}

/** The gateway's check, made safe for whatever NATS brings: a check that throws refuses the message. */
function checked(event: unknown, receivedAt: number, serverParty: string) {
  try {
    return streamEventProblem(event, receivedAt, serverParty);
  } catch (error) {
    return pactError('invalid_event', String(error));
  }
}
