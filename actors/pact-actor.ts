import { collectKey } from '../machines/pact/collects.js';
import type { PactCommand } from '../machines/pact/commands.js';
import { eventOf, refusal } from '../machines/pact/decide.js';
import type { PactEvent } from '../machines/pact/events.js';
import { evolve } from '../machines/pact/evolve.js';
import { newPact, type ServerPolicy } from '../machines/pact/spec.js';
import type { Pact } from '../machines/pact/types.js';
import { pactError, type PactError } from '../protocol/errors.js';
import { RailError, type Rail } from '../rails/rail.js';
import { entryOf, ExpectedSequenceMismatch, type Journal, type JournalEntry, type JournalEvent } from './journal.js';
import type { AdmittedCommand, AdmittedRequest, CommandReply, CreateCommand } from './messages.js';
import { applyEntry } from './replay.js';
import type { SnapshotStore } from './snapshots.js';

const RECENT_COMMANDS = 32;
/** Entries an actor may hold beyond its stored snapshot; coming back replays at most this many. */
const SNAPSHOT_EVERY = 16;

export interface ActorDeps {
  journal: Journal;
  snapshots: SnapshotStore;
  rails: ReadonlyMap<string, Rail>;
  policy: ServerPolicy;
}

type Outcome = { event: JournalEvent; next: Pact } | { reply: CommandReply };

/**
 * The single writer of one pact. It decides each command with the pure machine, appends the result to the
 * journal (compare-and-set on the pact's last sequence), and only then answers. The journal is the truth;
 * a snapshot goes to LevelDB every SNAPSHOT_EVERY entries and when the actor is passivated.
 */
export class PactActor {
  private unsnapshotted = 0;

  private constructor(
    readonly pactId: string,
    private readonly deps: ActorDeps,
    private pact: Pact | undefined,
    private seq: number,
    private recentCommands: string[],
  ) {}

  /** Comes back from the LevelDB snapshot plus the journal tail, or from the journal alone. */
  static async load(pactId: string, deps: ActorDeps): Promise<PactActor> {
    const snapshot = await deps.snapshots.get(pactId);
    const actor = new PactActor(pactId, deps, snapshot?.pact, snapshot?.seq ?? 0, snapshot?.recentCommands ?? []);
    await actor.catchUp();
    return actor;
  }

  /** Decides an admitted command, appends the entry with its signed call, and only then answers. */
  async handle(request: AdmittedRequest, now: number, retried = false): Promise<CommandReply> {
    if (this.pact && this.recentCommands.includes(request.id)) return this.success();
    const outcome = await this.decide(request.command, now);
    if ('reply' in outcome) return outcome.reply;
    const { event, next } = outcome;
    try {
      await this.commit(entryOf({ commandId: request.id, event, envelope: request.envelope, previous: this.pact, next }), next);
    } catch (error) {
      if (!(error instanceof ExpectedSequenceMismatch) || retried) throw error;
      await this.catchUp(); // another writer got there first: see what it wrote, then decide again
      return this.handle(request, now, true);
    }
    return this.success();
  }

  private async decide(command: AdmittedCommand, now: number): Promise<Outcome> {
    if (command.type === 'create') return this.decideCreate(command, now);
    const pact = this.pact;
    if (!pact) return failure(pactError('not_found', `no pact ${this.pactId}`));
    const refused = refusal(pact, command, now);
    if (refused) return failure(refused);
    const event = command.type === 'fund' ? await this.fundingEvent(pact, command, now) : eventOf(command, now);
    if ('reply' in event) return event;
    const next = evolve(pact, event);
    if (next) return { event, next };
    if (command.type === 'poke' || command.type === 'recordPayouts') return { reply: this.success() };
    return failure(pactError('invalid_state', `${command.type} is not possible now`, { state: pact.state }));
  }

  private decideCreate(command: CreateCommand, now: number): Outcome {
    if (this.pact) return { reply: this.success() }; // the id is derived from the signed call: a replay
    const rail = this.deps.rails.get(command.spec.rail);
    if (!rail) return failure(pactError('rail_not_available', `rail ${command.spec.rail} is not available`));
    const pact = newPact({
      id: this.pactId,
      spec: command.spec,
      createdBy: command.signer,
      at: now,
      policy: this.deps.policy,
      escrowAccount: rail.escrowAccount,
    });
    return { event: { type: 'created', at: now, pact }, next: pact };
  }

  /** Without a proof: the 402 requirement. With one: collect first, keyed per funding round, then the event. */
  private async fundingEvent(
    pact: Pact,
    command: Extract<PactCommand, { type: 'fund' }>,
    now: number,
  ): Promise<PactEvent | { reply: CommandReply }> {
    const party = pact.parties.find((p) => p.party === command.signer)!;
    const rail = this.deps.rails.get(pact.rail)!;
    const amount = { amount: (BigInt(party.deposit.amount) + BigInt(party.bond.amount)).toString(), asset: pact.asset };
    const requirement = rail.quote(party.party, amount);
    if (command.proof === null) {
      return failure(pactError('payment_required', 'pay the requirement, then repeat the call with X-PAYMENT', { requirement }));
    }
    try {
      const receipt = await rail.collect({
        key: collectKey(pact.id, party),
        pactId: pact.id,
        payer: party.party,
        amount,
        proof: command.proof,
      });
      return { type: 'fund', at: now, party: party.party, receipt: receipt.ref };
    } catch (error) {
      if (!(error instanceof RailError)) throw error;
      return failure(pactError('payment_failed', error.message, { reason: error.code, requirement }));
    }
  }

  /** Appends the entry, then adopts `next`, the pact the entry leads to. */
  private async commit(entry: JournalEntry, next: Pact): Promise<void> {
    const seq = await this.deps.journal.append(entry, this.seq);
    this.apply(seq, entry, next);
    if (this.unsnapshotted >= SNAPSHOT_EVERY) await this.snapshot();
  }

  /** Stores the actor's state so that it comes back without replaying the journal from the start. */
  async snapshot(): Promise<void> {
    if (!this.pact || this.unsnapshotted === 0) return;
    this.unsnapshotted = 0;
    await this.deps.snapshots.put(this.pactId, { seq: this.seq, pact: this.pact, recentCommands: this.recentCommands });
  }

  private apply(seq: number, entry: JournalEntry, next: Pact): void {
    this.unsnapshotted++;
    this.pact = next;
    this.seq = seq;
    this.recentCommands = [...this.recentCommands, entry.commandId].slice(-RECENT_COMMANDS);
  }

  /** Replays journal entries newer than what the actor holds. */
  private async catchUp(): Promise<void> {
    for (const { seq, value } of await this.deps.journal.entriesAfter(this.pactId, this.seq)) {
      this.apply(seq, value, applyEntry(this.pact, value));
    }
  }

  private success(): CommandReply {
    return { ok: true, pact: this.pact!, seq: this.seq };
  }
}

const failure = (error: PactError): { reply: CommandReply } => ({ reply: { ok: false, error } });
