import type { Nats } from '../actors/nats.js';
import { decodeEntry, entryMessage, type JournalEntry } from '../actors/journal.js';
import { seqBeforeTime } from '../actors/stream-journal.js';
import { JOURNAL_STREAM } from '../actors/subjects.js';
import type { AsyncSigner } from '../protocol/node-signer.js';
import { ArrivalBatches } from '../projection/arrival-batches.js';
import { journalMessageAt, type JournalMessage } from '../projection/journal-follower.js';
import { TappedFollower, type JournalTap } from '../projection/tapped-follower.js';
import type { Clock } from '../runtime/clock.js';
import { eventIdOf, MAX_EVENT_LIFETIME_MS, type PublicEvent } from './event.js';
import type { EventStore } from './event-store.js';
import type { NotifiedParties } from './notified-parties.js';

/**
 * The position is written after this many entries or more (a whole batch at a time), and once nothing has
 * waited for POSITION_IDLE_MS, not after every entry of a quiet node: re-reading what follows it is harmless.
 */
const POSITION_EVERY = 100;
const POSITION_IDLE_MS = 1_000;
/** Notifications made, checked and published together. */
const BATCH = 64;
/**
 * How far the clock of the node that wrote a journal entry may be from nats-server's, which times the entry's
 * message, for a start to skip it by that time alone (a start also checks the last entry it skips).
 */
const CLOCK_MARGIN_MS = 60 * 60 * 1000;

/**
 * The event the server publishes when a pact's state changes (creation included): `pact.<STATE>`, to the
 * pact's parties, referring to the pact, signed with the server's key. Everything in it comes from the
 * journal entry (`createdAt` is the entry's time), so the same entry always makes the same event, with the
 * same id: that is what makes it published once, however often it is made.
 */
export async function notificationOf(entry: JournalEntry & { state: NonNullable<JournalEntry['state']> }, parties: string[], server: AsyncSigner): Promise<PublicEvent> {
  const unsigned = {
    v: 0 as const,
    privacy: 'public' as const,
    publisher: server.party,
    kind: `pact.${entry.state}`,
    recipients: parties as PublicEvent['recipients'],
    refs: [{ type: 'pact', id: entry.pactId }],
    createdAt: new Date(entry.event.at).toISOString(),
    expiresAt: new Date(expiryOf(entry)).toISOString(),
    body: { pactId: entry.pactId, state: entry.state, stateNonce: entry.nonce },
  };
  const id = eventIdOf(unsigned);
  return { ...unsigned, id, signature: await server.sign(id) };
}

/** When the notification of a journal entry expires (milliseconds). */
const expiryOf = (entry: JournalEntry) => entry.event.at + MAX_EVENT_LIFETIME_MS;
const expired = (entry: JournalEntry, now: number) => expiryOf(entry) <= now;

/**
 * When a notification is taken onto the stream: now, but never before its entry was made. A node whose clock
 * is behind the writer's would otherwise stamp it with more than seven days to live, which every check
 * refuses (the node itself vouches for it unchecked, so the nodes' stores would disagree).
 */
export const receivedAtOf = (notification: PublicEvent, now: number) => Math.max(now, Date.parse(notification.createdAt));

/**
 * Follows the pact journal from its own position (kept in the node's event store), hearing what the node's
 * projector takes from it and reading the rest by sequence (`TappedFollower`), and publishes a
 * notification for every entry that changes a pact's state, then moves its position on. After a crash it
 * starts again from the last position it kept: an event made again has the same id, which the stream and
 * the event store already hold, so each transition is notified once. Every node runs one; they publish the
 * same ids.
 */
export class PactNotifier {
  private readonly follower: TappedFollower;
  private readonly batches = new ArrivalBatches('the pact notifier', (messages) => this.notifyInBatches(messages));
  private stopped = false;
  /** The journal sequence notified up to, and the one the store holds. */
  private reached = 0;
  private written = 0;
  /** Position writes, one after the other: a later one never lands first. */
  private positionWrites: Promise<void> = Promise.resolve();
  private positionTimer: NodeJS.Timeout | undefined;
  constructor(
    private readonly nats: Nats,
    private readonly store: EventStore,
    private readonly parties: NotifiedParties,
    private readonly publish: (event: PublicEvent, receivedAt: number) => Promise<unknown>,
    private readonly server: AsyncSigner,
    private readonly clock: Clock,
    /** The journal as the node's projector takes it: nats-server delivers it to the node once. */
    journal: JournalTap,
  ) {
    this.follower = new TappedFollower(nats, JOURNAL_STREAM, 'the pact notifier', journal, (message) => this.batches.arrive(message));
  }

  /**
   * Starts after its kept position, or after the journal entries too old to make a live notification if
   * that is further on: a node with a new event store (or one down for longer than an event lives) does
   * not read the whole history of the journal, nor sign for it, before it notifies today's transitions.
   */
  async start(): Promise<void> {
    this.written = await this.store.notifiedUpTo();
    this.reached = Math.max(this.written, await this.expiredUpTo());
    this.follower.start(this.reached);
    if (this.reached > this.written) this.writePositionLater();
  }

  /**
   * The last message nats-server took more than an event's lifetime and CLOCK_MARGIN_MS ago, provided its
   * entry's notification has expired by the node's clock: a clock moved on by the test hooks, or a
   * nats-server clock far behind the nodes', would otherwise skip live entries. 0 (skip nothing) when that
   * cannot be told.
   */
  private async expiredUpTo(): Promise<number> {
    try {
      const seq = await seqBeforeTime(this.nats, JOURNAL_STREAM, this.clock.now() - MAX_EVENT_LIFETIME_MS - CLOCK_MARGIN_MS);
      return seq !== undefined && (await this.expiredAt(seq)) ? seq : 0;
    } catch (error) {
      console.error('the pact notifier could not tell where the live journal entries start; it reads on from its position:', String(error));
      return 0;
    }
  }

  /** Whether the journal entry at `seq` made a notification that expired over CLOCK_MARGIN_MS ago (none at 0: nothing to skip). */
  private async expiredAt(seq: number): Promise<boolean> {
    if (seq === 0) return true;
    const message = await journalMessageAt(this.nats, JOURNAL_STREAM, seq);
    const entry = message ? decodeEntry(message.data, message.subject) : undefined;
    return entry !== undefined && expired(entry, this.clock.now() - CLOCK_MARGIN_MS); // earlier entries' writers' clocks may be ahead of its writer's
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.batches.halt(); // first: a follower held back by a full backlog is let go
    await this.follower.stop();
    await this.batches.finished();
    clearTimeout(this.positionTimer);
    await this.keepPosition();
  }

  /** Notifies what arrived, BATCH entries at a time, moving the position on; it is written once the notifier is idle. */
  private async notifyInBatches(messages: JournalMessage[]): Promise<void> {
    for (let i = 0; i < messages.length && !this.stopped; i += BATCH) {
      const batch = messages.slice(i, i + BATCH);
      await this.notifyAll(batch);
      this.reached = batch.at(-1)!.seq;
      if (this.reached - this.written >= POSITION_EVERY) await this.keepPosition();
    }
    if (!this.stopped) this.writePositionLater();
  }

  /** Writes the position once the notifier has been idle for POSITION_IDLE_MS. */
  private writePositionLater(): void {
    clearTimeout(this.positionTimer);
    this.positionTimer = setTimeout(() => void this.keepPosition(), POSITION_IDLE_MS).unref();
  }

  /** Writes the position reached, after any write under way. */
  private keepPosition(): Promise<void> {
    this.positionWrites = this.positionWrites.then(() => this.writePosition());
    return this.positionWrites;
  }

  /** One that cannot be written is tried again later (until then a restart re-reads a little more); never throws. */
  private async writePosition(): Promise<void> {
    if (this.reached <= this.written) return;
    const reached = this.reached;
    try {
      await this.store.notified(reached);
      this.written = reached;
    } catch (error) {
      console.error('pact notifier could not keep its position:', String(error));
      if (!this.stopped) this.writePositionLater();
    }
  }

  /**
   * The notifications of `messages`, made together (their signatures asked for in one turn: the signer may
   * batch them), those not stored yet published together: different pacts' at once, one pact's one after the
   * other, so that a publish that fails and is made again with the batch can never land after a later state
   * of its pact.
   */
  private async notifyAll(messages: JournalMessage[]): Promise<void> {
    const made = await Promise.all(messages.map((message) => this.notificationFor(message)));
    await this.parties.write().catch((error) => console.error('pact notifier could not keep the parties of new pacts:', String(error)));
    const events = made.filter((event): event is PublicEvent => event !== undefined);
    const byPact = new Map<string, PublicEvent[]>();
    events.forEach((event) => {
      if (this.store.seqOf(event.id) !== undefined) return;
      const pactId = (event.body as { pactId: string }).pactId;
      const ofPact = byPact.get(pactId);
      if (ofPact) ofPact.push(event);
      else byPact.set(pactId, [event]);
    });
    const now = this.clock.now();
    await Promise.all([...byPact.values()].map(async (ofPact) => {
      for (const event of ofPact) await this.publish(event, receivedAtOf(event, now));
    }));
  }

  /**
   * Called for a batch's messages in their order, each up to its first wait: the parties known from a
   * creation reach its later entries. An entry whose notification would have expired makes none (and is
   * neither signed for nor has its parties looked up).
   */
  private async notificationFor(message: JournalMessage): Promise<PublicEvent | undefined> {
    const entry = decodeEntry(message.data, message.subject);
    if (!entry?.state) return undefined;
    if (entry.event.type === 'created') this.parties.created(entry.pactId, entry.event.pact.parties.map((p) => p.party));
    const parties = expired(entry, this.clock.now()) ? undefined : await this.partiesFor(entry.pactId);
    if (entry.state === 'SETTLED' || entry.state === 'CANCELLED') this.parties.ended(entry.pactId);
    if (!parties) return undefined;
    return notificationOf({ ...entry, state: entry.state }, parties, this.server);
  }

  private async partiesFor(pactId: string): Promise<string[]> {
    const parties = (await this.parties.of(pactId)) ?? (await this.partiesOf(pactId));
    if (!parties) throw new Error(`the journal holds no creation of ${pactId}`); // tried again in a second
    return parties;
  }

  /** The parties of the pact's creation entry, its position 0 (what every node reads alike), kept from then on. */
  private async partiesOf(pactId: string): Promise<string[] | undefined> {
    const message = await entryMessage(this.nats.jsm, pactId, 0);
    const entry = message && decodeEntry(message.data, message.subject);
    if (entry?.event.type !== 'created') return undefined;
    const parties = entry.event.pact.parties.map((p) => p.party);
    this.parties.created(pactId, parties);
    return parties;
  }
}
