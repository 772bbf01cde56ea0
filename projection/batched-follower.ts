import type { Nats } from '../actors/nats.js';
import { ArrivalBatches } from './arrival-batches.js';
import { JournalFollower, type JournalMessage } from './journal-follower.js';
import { PositionWaiters } from './position-waiters.js';

/** What follows a written batch once the read model's position has moved (telling listeners); it must not throw. */
export type Afterwards = () => void;

export interface BatchedFollowerOptions {
  stream: string;
  /** Names the durable consumer: every node keeps its own read model. */
  consumerName: string;
  /** Names the projector in the log. */
  what: string;
  /**
   * Writes one batch, in stream order. Throws to have it written again a second later, together with what
   * arrived meanwhile: a batch may be written twice. May resolve to what is to follow once the position moved.
   */
  write: (batch: JournalMessage[]) => Promise<Afterwards | void>;
  /** Unwritten bytes past which the follower is held back (beside MAX_BACKLOG messages). */
  maxBacklogBytes?: number;
}

/**
 * How a read model is kept from one journal stream: a follower from the read model's own position, what
 * arrives written in batches, and the position the read model then holds, for whoever waits on it
 * (read-your-writes). The offers', the wallets' and the Agent Stream's projectors each keep one.
 */
export class BatchedFollower {
  private readonly follower: JournalFollower;
  private readonly waiters = new PositionWaiters();
  private readonly batches: ArrivalBatches;

  constructor(nats: Nats, { stream, consumerName, what, write, maxBacklogBytes }: BatchedFollowerOptions) {
    const writeAndReach = async (batch: JournalMessage[]) => {
      const afterwards = await write(batch);
      this.waiters.reach(batch.at(-1)!.seq);
      try {
        afterwards?.();
      } catch (error) {
        console.error(`${what}: after writing a batch:`, String(error)); // the batch is written: never again for this
      }
    };
    this.batches = new ArrivalBatches(what, writeAndReach, maxBacklogBytes);
    this.follower = new JournalFollower(nats, stream, consumerName, (message) => this.batches.arrive(message));
  }

  /** The stream position the read model holds. */
  get reachedSeq(): number {
    return this.waiters.reachedSeq;
  }

  /** Follows the stream after `position` (what the read model holds); resolves once it holds what the stream held at the start. */
  async start(position: number): Promise<void> {
    this.waiters.reach(position);
    await this.reached(await this.follower.start(position));
  }

  /** Stops following; the batch being written is finished (what is not, the stream brings back at the next start). */
  async stop(): Promise<void> {
    this.batches.halt(); // first: a follower held back by a full backlog is let go
    await this.follower.stop();
    await this.batches.finished();
  }

  /** Resolves once the read model holds stream position `seq`, or after `timeoutMs` when one is given. */
  reached(seq: number, timeoutMs?: number): Promise<void> {
    return this.waiters.reached(seq, timeoutMs);
  }
}
