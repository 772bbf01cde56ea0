import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { pactError } from '../protocol/errors.js';
import type { Clock } from '../runtime/clock.js';
import { ensureDurableConsumer, PULL, type Nats } from './nats.js';
import { Leases } from './leases.js';
import type { CommandMessage, CommandReply } from './messages.js';
import { PactActor, type ActorDeps } from './pact-actor.js';
import { CMD_STREAM, commandSubject, partitionConsumer, partitionOf } from './subjects.js';

export interface HostOptions {
  hostId: string;
  partitions: number;
  /** Actors idle this long are passivated: snapshotted and dropped from memory. */
  idleMs: number;
  /** Past this many live actors, every idle one is passivated. */
  maxActors: number;
}

interface Live {
  actor: Promise<PactActor>;
  queue: Promise<unknown>;
  busy: number;
  lastUsed: number;
}

const encoder = new TextEncoder();

/**
 * Owns partitions (by lease) and runs one actor per pact in them. Commands of one pact are applied in
 * order, one at a time; different pacts run concurrently.
 */
export class ActorHost {
  private readonly live = new Map<string, Live>();
  private readonly consumers = new Map<number, ConsumerMessages>();
  private readonly leases: Leases;
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly nats: Nats,
    private readonly deps: ActorDeps,
    private readonly clock: Clock,
    private readonly options: HostOptions,
  ) {
    this.leases = new Leases(nats.leases, options.hostId, options.partitions, (owned) => this.follow(owned));
  }

  async start(): Promise<void> {
    await this.leases.start(5_000);
    this.sweeper = setInterval(() => void this.passivateIdle(), 10_000);
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    this.leases.stop();
    await Promise.all([...this.consumers.values()].map((c) => c.close()));
    await Promise.allSettled([...this.live.values()].map((l) => l.queue));
    await this.passivateIdle(-Infinity);
  }

  get liveActors(): number {
    return this.live.size;
  }

  /** Starts consuming the partitions it now owns, stops the ones it lost and forgets their actors. */
  private async follow(owned: ReadonlySet<number>): Promise<void> {
    for (const [partition, messages] of this.consumers) {
      if (owned.has(partition)) continue;
      await messages.close();
      this.consumers.delete(partition);
      for (const pactId of this.live.keys()) {
        if (partitionOf(pactId, this.options.partitions) === partition) this.live.delete(pactId);
      }
    }
    for (const partition of owned) {
      if (!this.consumers.has(partition)) this.consumers.set(partition, await this.consume(partition));
    }
  }

  private async consume(partition: number): Promise<ConsumerMessages> {
    const name = partitionConsumer(partition);
    await ensureDurableConsumer(this.nats.jsm, CMD_STREAM, {
      name,
      filterSubject: commandSubject(partition),
      ackWaitMs: 10_000,
      maxAckPending: 1_000,
    });
    const consumer = await this.nats.js.consumers.get(CMD_STREAM, name);
    const messages = await consumer.consume({ ...PULL, max_messages: 256 });
    void (async () => {
      for await (const message of messages) this.dispatch(message);
    })();
    return messages;
  }

  /**
   * Runs one command and answers it. A command that fails (the journal did not take the entry, say) is
   * answered 503 and not retried: the caller was told the outcome is unknown and reads the pact.
   */
  private dispatch(message: JsMsg): void {
    let command: CommandMessage;
    try {
      command = message.json<CommandMessage>();
    } catch {
      message.term();
      return;
    }
    void this.run(command).then((reply) => {
      if (command.replyTo) this.nats.nc.publish(command.replyTo, encoder.encode(JSON.stringify(reply)));
      message.ack();
    });
  }

  /** Queues the command behind the pact's earlier ones. */
  run(command: CommandMessage): Promise<CommandReply> {
    const live = this.liveActor(command.pactId);
    live.busy++;
    const result = live.queue.then(async () => {
      const actor = await live.actor;
      return actor.handle(command, this.clock.now());
    });
    live.queue = result.catch(() => undefined).finally(() => {
      live.busy--;
      live.lastUsed = Date.now();
    });
    return result.catch((error): CommandReply => {
      console.error(`command ${command.id} on ${command.pactId} failed:`, String(error));
      // The actor may hold what the journal does not: commands queued behind this one, and later ones,
      // use a fresh actor from snapshot + journal, in the same queue, so there is still one writer.
      live.actor = PactActor.load(command.pactId, this.deps);
      live.actor.catch(() => undefined); // a failed load fails the next command, which loads again
      return { ok: false, error: pactError('unavailable', 'the command could not be applied now; read the pact and retry') };
    });
  }

  private liveActor(pactId: string): Live {
    let live = this.live.get(pactId);
    if (!live) {
      if (this.live.size >= this.options.maxActors) void this.passivateIdle(0);
      const actor = PactActor.load(pactId, this.deps);
      live = { actor, queue: actor.catch(() => undefined), busy: 0, lastUsed: Date.now() };
      this.live.set(pactId, live);
    }
    return live;
  }

  /** Drops idle actors from memory, storing their snapshots. */
  private async passivateIdle(idleMs = this.options.idleMs): Promise<void> {
    const cutoff = Date.now() - idleMs;
    const snapshots: Promise<void>[] = [];
    for (const [pactId, live] of this.live) {
      if (live.busy > 0 || live.lastUsed > cutoff) continue;
      this.live.delete(pactId);
      snapshots.push(live.actor.then((actor) => actor.snapshot()).catch((e) => console.error(`snapshot of ${pactId} failed`, e)));
    }
    await Promise.all(snapshots);
  }
}
