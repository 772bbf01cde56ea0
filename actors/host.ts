import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import { isGated, openGate, type AccessGate } from '../access/gate.js';
import { pactError, type PactError } from '../protocol/errors.js';
import type { Clock } from '../runtime/clock.js';
import { ensureDurableConsumer, PULL, type HostNats } from './nats.js';
import { Leases } from './leases.js';
import type { Verifier } from '../protocol/verify-pool.js';
import { admit, type Admission, type Admitting } from './admission.js';
import type { AdmittedRequest, CommandMessage, CommandReply, HostCommand } from './messages.js';
import { PactActor, type ActorDeps } from './pact-actor.js';
import { jsonBytes } from './json-bytes.js';
import { RecentDurations } from './recent-durations.js';
import { CMD_STREAM, JOURNAL_STREAM, kindOfSubject, partitionCommands, partitionConsumer, partitionOf, REPLY_PREFIX, type CommandKind } from './subjects.js';

export interface HostOptions {
  hostId: string;
  partitions: number;
  /** Actors idle this long are passivated: dropped from memory (their record is the node's read model). */
  idleMs: number;
  /** Past this many live actors, every idle one is passivated. */
  maxActors: number;
}

interface Live {
  /** Loaded when the first admitted command needs it: an inadmissible one never wakes the actor. */
  actor: Promise<PactActor> | undefined;
  queue: Promise<unknown>;
  busy: number;
  lastUsed: number;
}

const decoder = new TextDecoder();

/**
 * Owns partitions (by lease) and runs one actor per pact in them. Commands of one pact are applied in
 * order, one at a time; different pacts run concurrently.
 */
export class ActorHost {
  private readonly live = new Map<string, Live>();
  /**
   * Pacts whose last append had no answer (it may be in the journal or not): their actor comes back from
   * the journal, not from the record, however often it is passivated before it does.
   */
  private readonly unsure = new Set<string>();
  private readonly consumers = new Map<number, ConsumerMessages>();
  /** The journal's last sequence when this host took each partition it holds. */
  private readonly takenAt = new Map<number, number>();
  private readonly leases: Leases;
  /** How long the last 1,000 actors that came back from their pact's record took to load (`/health`). */
  readonly activations = new RecentDurations(1_000);
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly nats: HostNats,
    private readonly deps: ActorDeps,
    private readonly clock: Clock,
    private readonly options: HostOptions,
    private readonly verifier: Verifier,
    private readonly gate: AccessGate = openGate,
  ) {
    this.leases = new Leases(nats.leases, options.hostId, options.partitions, (owned) => this.follow(owned));
  }

  async start(): Promise<void> {
    await this.leases.start(5_000);
    this.sweeper = setInterval(() => this.passivateIdle(), 10_000);
  }

  async stop(): Promise<void> {
    clearInterval(this.sweeper);
    this.leases.stop();
    await Promise.all([...this.consumers.values()].map((c) => c.close()));
    await Promise.allSettled([...this.live.values()].map((l) => l.queue));
    this.live.clear();
  }

  /** Whether this host follows `partition` now (holds its lease and consumes its commands). */
  holds(partition: number): boolean {
    return this.consumers.has(partition);
  }

  /**
   * The journal position up to which another host may have written pacts of `partition`: past it, only
   * this host writes them (the lease says so; the journal's compare-and-set catches a host that lost it
   * and did not notice). Infinity for a partition it does not hold.
   */
  heldSince(partition: number): number {
    return this.takenAt.get(partition) ?? Infinity;
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
      this.takenAt.delete(partition);
      for (const pactId of this.live.keys()) {
        if (partitionOf(pactId, this.options.partitions) === partition) this.live.delete(pactId);
      }
    }
    for (const partition of owned) {
      if (this.consumers.has(partition)) continue;
      this.takenAt.set(partition, (await this.nats.jsm.streams.info(JOURNAL_STREAM)).state.last_seq);
      this.consumers.set(partition, await this.consume(partition));
    }
  }

  private async consume(partition: number): Promise<ConsumerMessages> {
    const name = partitionConsumer(partition);
    await ensureDurableConsumer(this.nats.jsm, CMD_STREAM, {
      name,
      filterSubject: partitionCommands(partition),
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
   * Anything on NATS may have been published by anyone allowed to: a message that is not a command for a
   * pact of its subject's partition, or names a reply subject outside the command buses' inboxes, is
   * dropped (so no host runs an actor for a pact of a partition another host holds).
   */
  private dispatch(message: JsMsg): void {
    const kind = kindOfSubject(message.subject);
    const command = kind && parseCommand(message.data);
    if (!kind || !command || partitionOfSubject(message.subject) !== partitionOf(command.pactId, this.options.partitions)) {
      message.term();
      return;
    }
    void this.run(command, kind).then((reply) => {
      if (command.replyTo) this.nats.nc.publish(command.replyTo, jsonBytes(withoutText(reply)));
      message.ack();
    });
  }

  /**
   * Admits the command (shape, signature) and queues it behind the pact's earlier ones. A command refused
   * before its signature is checked is answered at once; one whose signature fails, in its turn. Neither
   * wakes the pact's actor.
   */
  run(message: CommandMessage, kind: CommandKind): Promise<CommandReply> {
    const now = this.clock.now(); // the command's time: the decision judges it at its arrival
    const admitting = safely(message.id, () => admit(message.pactId, message.command, kind, Date.now()));
    if ('error' in admitting) return Promise.resolve({ ok: false, error: admitting.error });
    // The pact's queue is joined now, while the signature is checked, so its commands keep their arrival order.
    return this.apply(message, this.admitted(admitting, message.id, gatedCommand(message.command)), now);
  }

  /**
   * The admission once its signature is checked by the verifier, and then, but for verdicts, its signer's
   * access (the gate); a verifier or a gate that fails makes it a 503.
   */
  private async admitted(admitting: Admitting, commandId: string, gated: boolean): Promise<Admission> {
    if (!('signature' in admitting)) return admitting;
    let refused: PactError | undefined;
    try {
      const valid = await this.verifier.verify(admitting.signature);
      refused = !valid ? admitting.signature.refusal : gated ? await this.gate.problem(admitting.signature.signer) : undefined;
    } catch (error) {
      console.error('a signature or access could not be checked:', String(error));
      return { error: pactError('unavailable', 'the signature could not be checked now; retry') };
    }
    return refused ? { error: refused } : safely(commandId, admitting.then);
  }

  private apply(message: CommandMessage, admission: Promise<Admission>, now: number): Promise<CommandReply> {
    const live = this.liveActor(message.pactId);
    live.busy++;
    const result = live.queue.then(async (): Promise<CommandReply> => {
      const admitted = await admission;
      if ('error' in admitted) return { ok: false, error: admitted.error };
      const request: AdmittedRequest = { id: message.id, command: admitted.command, ...signedInputOf(message.command) };
      live.actor ??= this.load(message.pactId);
      return (await live.actor).handle(request, now);
    });
    live.queue = result.catch(() => undefined).finally(() => {
      live.busy--;
      live.lastUsed = Date.now();
    });
    return result.catch((error): CommandReply => {
      console.error(`command ${message.id} on ${message.pactId} failed:`, String(error));
      // The actor may hold what the journal does not: commands queued behind this one, and later ones,
      // use a fresh actor from the record and the journal, in the same queue, so there is still one writer.
      this.unsure.add(message.pactId);
      live.actor = undefined;
      return { ok: false, error: pactError('unavailable', 'the command could not be applied now; read the pact and retry') };
    });
  }

  /** The pact's actor, from its record, or also from the journal while its last append is unsure. */
  private async load(pactId: string): Promise<PactActor> {
    const unsure = this.unsure.has(pactId);
    const started = performance.now();
    const actor = await PactActor.load(pactId, this.deps, unsure);
    if (actor.exists && !unsure) this.activations.add(performance.now() - started); // unsure: it read the journal too
    if (unsure) this.unsure.delete(pactId);
    return actor;
  }

  private liveActor(pactId: string): Live {
    let live = this.live.get(pactId);
    if (!live) {
      if (this.live.size >= this.options.maxActors) this.passivateIdle(0);
      live = { actor: undefined, queue: Promise.resolve(), busy: 0, lastUsed: Date.now() };
      this.live.set(pactId, live);
    }
    return live;
  }

  /** Drops idle actors from memory; each comes back from its pact's record when next needed. */
  private passivateIdle(idleMs = this.options.idleMs): void {
    const cutoff = Date.now() - idleMs;
    for (const [pactId, live] of this.live) {
      if (live.busy === 0 && live.lastUsed <= cutoff) this.live.delete(pactId);
    }
  }
}

/** Admission never throws on what a schema let through; should it, the command is refused, not the partition. */
function safely<T extends Admitting>(commandId: string, admit: () => T): T | Admission {
  try {
    return admit();
  } catch (error) {
    console.error(`command ${commandId} could not be admitted:`, String(error));
    return { error: pactError('invalid_request', 'the command could not be read') };
  }
}

/** The signed input a command carries, which its journal entry keeps. */
function signedInputOf(command: HostCommand): Pick<AdmittedRequest, 'envelope' | 'offer'> {
  if (command.type === 'signed') return { envelope: command.envelope };
  if (command.type === 'accepted') return { envelope: command.envelope, offer: command.offer };
  return {};
}

/** A reply as it travels over NATS: the pact's JSON text is for a local gateway only. */
function withoutText(reply: CommandReply): CommandReply {
  if (!reply.ok) return reply;
  const { text: _text, ...travelling } = reply;
  return travelling;
}

const PACT_ID = /^p_[0-9a-f]{32}$/;
const REPLY_SUBJECT = new RegExp(`^${REPLY_PREFIX}\\.[A-Za-z0-9]+\\.[0-9a-f-]{36}$`);

/** The partition a command subject `pact.cmd.<partition>.<kind>` names. */
const partitionOfSubject = (subject: string) => Number(subject.split('.')[2]);

/** A command message of the right outer shape; its content is the actor's to admit. */
function parseCommand(data: Uint8Array): CommandMessage | undefined {
  let value: Partial<CommandMessage>;
  try {
    value = JSON.parse(decoder.decode(data)) as Partial<CommandMessage>;
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  if (typeof value.id !== 'string' || value.id.length === 0 || value.id.length > 64) return undefined;
  if (typeof value.pactId !== 'string' || !PACT_ID.test(value.pactId)) return undefined;
  if (typeof value.command !== 'object' || value.command === null || typeof value.command.type !== 'string') return undefined;
  if (value.replyTo !== undefined && (typeof value.replyTo !== 'string' || !REPLY_SUBJECT.test(value.replyTo))) return undefined;
  return value as CommandMessage;
}

/** Commands whose signer must pass the access gate: signed calls but the ways out, and acceptances' pacts. */
const gatedCommand = (command: HostCommand): boolean =>
  command.type === 'accepted' || (command.type === 'signed' && isGated(command.envelope?.action));
