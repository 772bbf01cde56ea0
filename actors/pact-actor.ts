import { collectKey } from '../machines/pact/collects.js';
import type { PactCommand } from '../machines/pact/commands.js';
import { eventOf, refusal } from '../machines/pact/decide.js';
import type { PactEvent } from '../machines/pact/events.js';
import { evolve } from '../machines/pact/evolve.js';
import { newPact, type ServerPolicy } from '../machines/pact/spec.js';
import type { Pact } from '../machines/pact/types.js';
import { pactError, type PactError } from '../protocol/errors.js';
import { RailError, type FundCall, type Rail } from '../rails/rail.js';
import type { SignedCall } from '../protocol/signed-call.js';
import type { Committed } from '../projection/projector.js';
import type { PactRecord } from '../projection/read-model.js';
import { entryOf, recentAfter, type Journal, type JournalEntry, type JournalEvent } from './journal.js';
import { ExpectedSequenceMismatch } from './stream-journal.js';
import type { AdmittedCommand, AdmittedRequest, CommandReply, CreateCommand } from './messages.js';
import { applyEntry } from './replay.js';

/**
 * The node's records of its pacts (its read model): an actor comes back from its pact's record and hands
 * every entry it appends over at once, so the record is the actor's only copy on disk.
 */
export interface ActorRecords {
  load(pactId: string): PactRecord | undefined;
  /** Whether the pact's record is known to hold every entry the journal has of it. */
  current(pactId: string): boolean;
  committed(committed: Committed): void;
  /** A record read from the journal that the node's records may not hold yet. */
  recovered(record: PactRecord): void;
}

export interface ActorDeps {
  journal: Journal;
  records: ActorRecords;
  rails: ReadonlyMap<string, Rail>;
  policy: ServerPolicy;
}

/** A decision: an event to append (with the headers a paid fund answers with), or an answer without one. */
type Outcome = { event: JournalEvent; next: Pact; headers?: Record<string, string> } | { reply: CommandReply };

/**
 * The single writer of one pact. It decides each command with the pure machine, appends the result to the
 * journal (at the pact's next position, only while it is free), and only then answers. The journal is the truth.
 *
 * An actor comes back from the node's record of its pact without asking the journal: an append on a
 * record that is not the journal's newest finds its position taken, and then the actor reads the journal
 * and decides again. What no append checks (a refusal, a 402, a repeated command, and a collect, which
 * moves money before the append) is decided only on a record known to be current: one this actor has
 * confirmed by appending or reading the journal, or one the node's records vouch for.
 */
export class PactActor {
  private constructor(
    readonly pactId: string,
    private readonly deps: ActorDeps,
    private pact: Pact | undefined,
    private seq: number,
    private recentCommands: string[],
    private confirmed: boolean,
  ) {}

  /**
   * Comes back from the pact's record; with `fromJournal`, also reads the journal's newer entries (after a
   * failed append, whose outcome is unknown).
   */
  static async load(pactId: string, deps: ActorDeps, fromJournal = false): Promise<PactActor> {
    const record = deps.records.load(pactId);
    const actor = new PactActor(pactId, deps, record?.pact, record?.seq ?? 0, record?.recentCommands ?? [], false);
    if (fromJournal) await actor.confirm();
    return actor;
  }

  /** Whether the pact was created (a create's actor starts from nothing). */
  get exists(): boolean {
    return this.pact !== undefined;
  }

  /** Decides an admitted command, appends the entry with its signed call, and only then answers. */
  async handle(request: AdmittedRequest, now: number, retried = false): Promise<CommandReply> {
    if (request.command.type === 'fund' && !this.knownCurrent()) await this.confirm();
    if (this.pact && this.recentCommands.includes(request.id)) return this.unlessUnconfirmed(request, now, this.success());
    const outcome = await this.decide(request.command, now, request.envelope);
    if ('reply' in outcome) return this.unlessUnconfirmed(request, now, outcome.reply);
    const { event, next, headers } = outcome;
    const entry = entryOf({ commandId: request.id, event, envelope: request.envelope, offer: request.offer, previous: this.pact, next });
    try {
      return { ...success(await this.commit(entry, next)), ...(headers ? { headers } : {}) };
    } catch (error) {
      if (!(error instanceof ExpectedSequenceMismatch) || retried) throw error;
      await this.confirm(); // another writer got there first: see what it wrote, then decide again
      return this.handle(request, now, true);
    }
  }

  /** `reply`, decided without an append, if the record it was decided on is current; else decides again on the journal's. */
  private async unlessUnconfirmed(request: AdmittedRequest, now: number, reply: CommandReply): Promise<CommandReply> {
    if (this.knownCurrent()) return reply;
    await this.confirm();
    return this.handle(request, now);
  }

  /** Whether the actor's record is the journal's newest: it confirmed it, or the node's records vouch for it. */
  private knownCurrent(): boolean {
    return this.confirmed || this.deps.records.current(this.pactId);
  }

  private async decide(command: AdmittedCommand, now: number, envelope: SignedCall | undefined): Promise<Outcome> {
    if (command.type === 'create') return this.decideCreate(command, now);
    const pact = this.pact;
    if (!pact) return failure(pactError('not_found', `no pact ${this.pactId}`));
    const refused = refusal(pact, command, now);
    if (refused) return failure(refused);
    const funding = command.type === 'fund' ? await this.fundingEvent(pact, command, envelope as FundCall | undefined, now) : { event: eventOf(command, now) };
    if ('reply' in funding) return funding;
    const { event, headers } = funding;
    const next = evolve(pact, event);
    if (next) return { event, next, ...(headers ? { headers } : {}) };
    if (command.type === 'poke' || command.type === 'recordPayouts') return { reply: this.success() };
    return failure(pactError('invalid_state', `${command.type} is not possible now`, { state: pact.state }));
  }

  private decideCreate(command: CreateCommand, now: number): Outcome {
    if (this.pact) return { reply: this.success() }; // the id is derived from the signed call: a replay
    const rail = this.deps.rails.get(command.spec.rail);
    if (!rail) return failure(pactError('rail_not_available', `rail ${command.spec.rail} is not available`));
    const asset = command.spec.parties[0]!.deposit.asset;
    if (!rail.holds(asset)) return failure(pactError('invalid_request', `the ${rail.name} rail does not hold ${asset}`, { field: 'call.parties' }));
    if (!rail.ready) return failure(railNotReady(rail.name));
    const pact = newPact({
      id: this.pactId,
      spec: command.spec,
      createdBy: command.signer,
      at: now,
      policy: this.deps.policy,
      escrowAccount: rail.escrowAccount,
      ...(command.sourceOffer ? { sourceOffer: command.sourceOffer } : {}),
    });
    return { event: { type: 'created', at: now, pact }, next: pact };
  }

  /**
   * Without a proof: the 402 requirement (and the rail's headers). With one: collect first, keyed per funding
   * round, then the event.
   */
  private async fundingEvent(
    pact: Pact,
    command: Extract<PactCommand, { type: 'fund' }>,
    call: FundCall | undefined,
    now: number,
  ): Promise<{ event: PactEvent; headers?: Record<string, string> } | { reply: CommandReply }> {
    const party = pact.parties.find((p) => p.party === command.signer)!;
    const rail = this.deps.rails.get(pact.rail)!;
    const unaddressed = railAddressProblem(rail, call);
    if (unaddressed) return failure(unaddressed);
    const amount = { amount: (BigInt(party.deposit.amount) + BigInt(party.bond.amount)).toString(), asset: pact.asset };
    const charge = { key: collectKey(pact.id, party), pactId: pact.id, payer: party.party, amount, ...(call ? { call } : {}) };
    if (command.proof === null) {
      if (!rail.ready) return failure(railNotReady(rail.name));
      const { requirement, headers } = await rail.quote(charge);
      const paidHow = rail.needsRailAddress ? 'the same call again with Authorization: Payment' : 'the call again with X-PAYMENT';
      return { reply: { ok: false, error: pactError('payment_required', `pay the requirement, then send ${paidHow}`, { requirement }), ...(headers ? { headers } : {}) } };
    }
    try {
      const receipt = await rail.collect({ ...charge, proof: command.proof });
      return { event: { type: 'fund', at: now, party: party.party, receipt: receipt.ref }, ...(receipt.headers ? { headers: receipt.headers } : {}) };
    } catch (error) {
      if (!(error instanceof RailError)) throw error;
      // The rail's own trouble may have moved money: the payer retries with the same proof, never a new one.
      if (error.code === 'rail_failure') return failure(pactError('unavailable', error.message, { reason: error.code, retryAfter: 1 }));
      const { requirement, headers } = await rail.quote(charge); // what a payment must meet now (mpp: a fresh challenge for this call)
      return { reply: { ok: false, error: pactError('payment_failed', error.message, { reason: error.code, requirement }), ...(headers ? { headers } : {}) } };
    }
  }

  /**
   * Appends the entry, adopts `next`, the pact it leads to, and hands the record (serialised here, once) to
   * the node's records; the answer sends the same text.
   */
  private async commit(entry: JournalEntry, next: Pact): Promise<PactRecord> {
    const previousSeq = this.seq;
    const seq = await this.deps.journal.append(entry);
    this.apply(seq, entry, next);
    this.confirmed = true;
    const record = this.record();
    this.deps.records.committed({ entry, previousSeq, record });
    return record;
  }

  private apply(seq: number, entry: JournalEntry, next: Pact): void {
    this.pact = next;
    this.seq = seq;
    this.recentCommands = recentAfter(this.recentCommands, entry.commandId);
  }

  /** Reads the journal's entries newer than what the actor holds; the actor is then current. */
  private async confirm(): Promise<void> {
    const newer = await this.deps.journal.entriesFrom(this.pactId, this.pact ? this.pact.stateNonce + 1 : 0);
    for (const { seq, value } of newer) this.apply(seq, value, applyEntry(this.pact, value));
    this.confirmed = true;
    if (newer.length > 0) this.deps.records.recovered(this.record());
  }

  /** The actor's state as a record; the JSON text is made on each call (the actor keeps no copy of it). */
  private record(): PactRecord {
    return { pact: this.pact!, text: JSON.stringify(this.pact), seq: this.seq, recentCommands: this.recentCommands };
  }

  private success(): CommandReply {
    return success(this.record());
  }
}

const success = ({ pact, text, seq }: PactRecord): CommandReply => ({ ok: true, pact, text, seq });
/** A rail that pays from a named address (mpp) needs it in the signed call, and it must be one of the rail's. */
function railAddressProblem(rail: Rail, call: FundCall | undefined): PactError | undefined {
  const address = call?.call.railAddress;
  if (address === undefined) {
    return rail.needsRailAddress ? pactError('invalid_request', `the ${rail.name} rail needs the payer's address in call.railAddress`, { field: 'call.railAddress' }) : undefined;
  }
  return rail.isAddress(address) ? undefined : pactError('invalid_request', `not an address on the ${rail.name} rail`, { field: 'call.railAddress' });
}

const railNotReady = (rail: string) =>
  pactError('rail_not_ready', `the ${rail} rail is not ready (GET /health says why); new pacts and funds wait until it is`, { retryAfter: 5 });
const failure = (error: PactError): { reply: CommandReply } => ({ reply: { ok: false, error } });
