import type { Nats } from '../actors/nats.js';
import { decodeEntry, journalMessage, type JournalEntry } from '../actors/journal.js';
import { JOURNAL_STREAM, journalSubject } from '../actors/subjects.js';
import type { KeyPair } from '../protocol/sign.js';
import { signPayload } from '../protocol/sign.js';
import { JournalFollower, MAX_BACKLOG, type JournalMessage } from '../projection/journal-follower.js';
import type { Clock } from '../runtime/clock.js';
import { eventIdOf, MAX_EVENT_LIFETIME_MS, type PublicEvent } from './event.js';
import type { EventStore } from './event-store.js';

const RETRY_MS = 1_000;
/** Pacts whose parties are kept from their creation entry; past this, the oldest are read from the journal again. */
const KNOWN_PACTS = 10_000;
/** The position is written at least this often (and whenever nothing is waiting); re-reading what follows it is harmless. */
const POSITION_EVERY = 100;

/**
 * The event the server publishes when a pact's state changes (creation included): `pact.<STATE>`, to the
 * pact's parties, referring to the pact, signed with the server's key. Everything in it comes from the
 * journal entry (`createdAt` is the entry's time), so the same entry always makes the same event, with the
 * same id: that is what makes it published once, however often it is made.
 */
export function notificationOf(entry: JournalEntry & { state: NonNullable<JournalEntry['state']> }, parties: string[], server: KeyPair): PublicEvent {
  const unsigned = {
    v: 0 as const,
    privacy: 'public' as const,
    publisher: server.party,
    kind: `pact.${entry.state}`,
    recipients: parties as PublicEvent['recipients'],
    refs: [{ type: 'pact', id: entry.pactId }],
    createdAt: new Date(entry.event.at).toISOString(),
    expiresAt: new Date(entry.event.at + MAX_EVENT_LIFETIME_MS).toISOString(),
    body: { pactId: entry.pactId, state: entry.state, stateNonce: entry.nonce },
  };
  const id = eventIdOf(unsigned);
  return { ...unsigned, id, signature: signPayload(id, server) };
}

/**
 * Follows the pact journal from its own position (kept in the node's event store) and publishes a
 * notification for every entry that changes a pact's state, then moves its position on. After a crash it
 * starts again from the last position it kept: an event made again has the same id, which the stream and
 * the event store already hold, so each transition is notified once. Every node runs one; they publish the
 * same ids.
 */
export class PactNotifier {
  private readonly follower: JournalFollower;
  private arrivals: JournalMessage[] = [];
  private working: Promise<void> | undefined;
  private stopped = false;
  /** Each pact's parties, read from its creation entry, for the few pacts being followed at once. */
  private readonly parties = new Map<string, string[]>();

  constructor(
    private readonly nats: Nats,
    private readonly store: EventStore,
    private readonly publish: (event: PublicEvent, receivedAt: number) => Promise<unknown>,
    private readonly server: KeyPair,
    private readonly clock: Clock,
    nodeId: string,
  ) {
    this.follower = new JournalFollower(nats, JOURNAL_STREAM, `notifier-${nodeId}`, (message) => this.arrive(message));
  }

  async start(): Promise<void> {
    await this.follower.start(await this.store.notifiedUpTo());
  }

  async stop(): Promise<void> {
    this.stopped = true; // first: a follower held back by this receiver is let go
    await this.follower.stop();
    await this.working;
  }

  private arrive(message: JournalMessage): Promise<void> | undefined {
    this.arrivals.push(message);
    if (!this.working && !this.stopped) this.working = this.work().finally(() => (this.working = undefined));
    return this.arrivals.length >= MAX_BACKLOG ? this.working : undefined;
  }

  private async work(): Promise<void> {
    let unwritten = 0;
    while (this.arrivals.length > 0 && !this.stopped) {
      const message = this.arrivals[0]!;
      try {
        await this.notify(message);
        this.arrivals.shift();
        if (++unwritten >= POSITION_EVERY || this.arrivals.length === 0) {
          await this.store.notified(message.seq);
          unwritten = 0;
        }
      } catch (error) {
        console.error('pact notifier could not publish; retrying in a second:', String(error));
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  private remember(pactId: string, parties: string[]): void {
    this.parties.set(pactId, parties);
    if (this.parties.size > KNOWN_PACTS) this.parties.delete(this.parties.keys().next().value as string);
  }

  private async notify(message: JournalMessage): Promise<void> {
    const entry = decodeEntry(message.data, message.subject);
    if (!entry?.state) return;
    if (entry.event.type === 'created') this.remember(entry.pactId, entry.event.pact.parties.map((p) => p.party));
    const parties = this.parties.get(entry.pactId) ?? (await this.partiesOf(entry.pactId));
    if (!parties) throw new Error(`the journal holds no creation of ${entry.pactId}`); // tried again in a second
    if (entry.state === 'SETTLED' || entry.state === 'CANCELLED') this.parties.delete(entry.pactId);
    const event = notificationOf({ ...entry, state: entry.state }, parties, this.server);
    if (Date.parse(event.expiresAt) <= this.clock.now() || (await this.store.seqOf(event.id)) !== undefined) return;
    await this.publish(event, this.clock.now());
  }

  /** The parties of the pact's creation entry, the first of its subject (what every node reads alike). */
  private async partiesOf(pactId: string): Promise<string[] | undefined> {
    const message = await journalMessage(this.nats.jsm, { seq: 1, next_by_subj: journalSubject(pactId) });
    const entry = message && decodeEntry(message.data, message.subject);
    return entry?.event.type === 'created' ? entry.event.pact.parties.map((p) => p.party) : undefined;
  }
}
