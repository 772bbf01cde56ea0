import type { AbstractBatchOperation } from 'abstract-level';
import { PACT_STATES, type Outcome, type Pact, type PactState } from '../machines/pact/types.js';
import { currentDeadline } from '../machines/pact/rules.js';
import { readNow, type JsonLevel } from '../storage/level.js';
import { ResponseCache } from './response-cache.js';
import { isTerminal, reputationOf, settledWell, type Standing } from '../stream/reputation.js';
import { pad, pageByTime, positionsUnder, type Position } from './time-pages.js';

/** Where a pact's record stands in the journal: its last entry's stream sequence and latest command ids. */
export interface Head {
  seq: number;
  recentCommands: string[];
}

/** A pact's record as the read model keeps it: the pact, its JSON text (what `GET` sends), and its head. */
export interface PactRecord extends Head {
  pact: Pact;
  text: string;
}

/** A pact's record as written to disk: its head, and its JSON text, parsed only once the record is used. */
export interface StoredRecord {
  head: Head;
  text: string;
}

export const recordOfStored = ({ head, text }: StoredRecord): PactRecord => ({ pact: JSON.parse(text) as Pact, text, ...head });

export interface ListFilter {
  party?: string;
  state?: PactState;
  groupId?: string;
  /** Exclusive lower bound on `updatedAt`, in milliseconds. */
  since?: number;
  limit: number;
}

/**
 * What a list shows of a pact: enough to choose which to read in full (`GET /pacts/:id`), and bounded by
 * the pact's party count, however large its terms, proposal or history.
 */
export interface PactSummary {
  id: string;
  state: PactState;
  stateNonce: number;
  rail: Pact['rail'];
  asset: string;
  proposer: Pact['proposer'];
  groupId: string | null;
  parties: { party: Pact['proposer']; required: boolean; confirmed: boolean }[];
  createdAt: number;
  updatedAt: number;
  fundBy: number;
  performBy: number | null;
  objectBy: number | null;
  verdictBy: number | null;
  closedAt: number | null;
  outcome: Outcome | null;
}

export function summaryOf(pact: Pact): PactSummary {
  return {
    id: pact.id,
    state: pact.state,
    stateNonce: pact.stateNonce,
    rail: pact.rail,
    asset: pact.asset,
    proposer: pact.proposer,
    groupId: pact.groupId,
    parties: pact.parties.map((p) => ({ party: p.party, required: p.required, confirmed: p.confirmed })),
    createdAt: pact.createdAt,
    updatedAt: pact.updatedAt,
    fundBy: pact.fundBy,
    performBy: pact.performBy,
    objectBy: pact.objectBy,
    verdictBy: pact.verdictBy,
    closedAt: pact.closedAt,
    outcome: pact.settlement?.outcome ?? null,
  };
}

export type StateCounts = Record<PactState, number>;

export interface ListPage {
  pacts: PactSummary[];
  /** Pass as `since` for the next page; null when this page is the last. */
  nextSince: number | null;
}

/** The stored layout; a read model of another is rebuilt from the journal (`open`). */
const LAYOUT = 3;

/** Index prefixes, most selective first. */
function indexPrefixes(pact: PactSummary): string[] {
  return [
    ...(pact.groupId !== null ? [`group!${pact.groupId}!`] : []),
    ...pact.parties.map((p) => `party!${p.party}!`),
    `state!${pact.state}!`,
    'all!',
  ];
}

function indexKeys(pact: PactSummary): string[] {
  return indexPrefixes(pact).map((prefix) => `${prefix}${pad(pact.updatedAt)}!${pact.id}`);
}

/**
 * The read model of pacts in LevelDB: each pact's latest record plus indexes by group, party, state and
 * update time. Built only from the journal, so it can be deleted and rebuilt.
 */
export class ReadModel {
  /** Each pact's record as JSON text: what `GET /pacts/:id` sends without parsing it. */
  private readonly pactTexts;
  private readonly heads;
  private readonly summaries;
  private readonly unpaid;
  /** Each party's terminal pacts and how many settled well (reputation `pact.settlement.v1`). */
  private readonly standings;
  /** Pacts with a journal entry the machine refuses: their record is the last good one, never current. */
  private readonly unreplayable;
  /** `<deadline>!<id>` of each open pact's next deadline: what the keeper pokes, read in time order. */
  private readonly deadlines;
  private readonly index;
  private readonly meta;
  /** How many pacts are in each state, kept with every write so that health never counts. */
  private counts: Promise<StateCounts> | undefined;

  private readonly responses: ResponseCache;

  /** `responseCacheBytes`: the budget of `GET /pacts/:id` bodies kept in memory (PACT_READ_CACHE_BYTES). */
  constructor(
    private readonly level: JsonLevel,
    responseCacheBytes = 0,
  ) {
    this.responses = new ResponseCache(responseCacheBytes);
    this.pactTexts = level.sublevel<string, string>('pacts', { valueEncoding: 'utf8' });
    this.heads = level.sublevel<string, Head>('heads', { valueEncoding: 'json' });
    this.unpaid = level.sublevel<string, string>('unpaid', { valueEncoding: 'utf8' });
    this.standings = level.sublevel<string, Standing>('standings', { valueEncoding: 'json' });
    this.deadlines = level.sublevel<string, string>('deadlines', { valueEncoding: 'utf8' });
    this.unreplayable = level.sublevel<string, string>('unreplayable', { valueEncoding: 'utf8' });
    this.summaries = level.sublevel<string, PactSummary>('summaries', { valueEncoding: 'json' });
    this.index = level.sublevel<string, string>('index', { valueEncoding: 'utf8' });
    this.meta = level.sublevel<string, unknown>('meta', { valueEncoding: 'json' });
  }

  /**
   * Records accepted by `remember` and not yet on disk, so that a reader sees a write from the moment it
   * is answered. Each leaves once a batch holding it (or a later record of its pact) is written.
   */
  private readonly unwritten = new Map<string, PactRecord>();

  /** The written record of the pact is at `seq` or newer: an unwritten one no newer is done with. */
  settle(id: string, seq: number): void {
    if ((this.unwritten.get(id)?.seq ?? Infinity) <= seq) this.unwritten.delete(id);
  }

  /** Pacts marked as holding a journal entry the machine refuses. */
  async unreplayablePacts(): Promise<Set<string>> {
    return new Set(await this.unreplayable.keys().all());
  }

  /** Makes `record` what reads of its pact return until it (or a newer one) is written. */
  remember(record: PactRecord): void {
    const known = this.unwritten.get(record.pact.id);
    if (known && known.seq >= record.seq) return;
    this.unwritten.set(record.pact.id, record);
    this.responses.changed(record.pact.id, record.text);
  }

  async get(id: string): Promise<Pact | undefined> {
    const unwritten = this.unwritten.get(id);
    if (unwritten) return unwritten.pact;
    const text = await this.pactTexts.get(id);
    return text === undefined ? undefined : (JSON.parse(text) as Pact);
  }

  /** The body of `response(id)` when it is in memory now. */
  cachedResponse(id: string): Buffer | undefined {
    return this.responses.get(id);
  }

  /** The body `GET /pacts/:id` sends: `{ pact }` around the record's JSON text, never parsed. */
  async response(id: string): Promise<Buffer | undefined> {
    return this.responses.get(id) ?? this.responses.fill(id, async () => this.unwritten.get(id)?.text ?? (await this.pactTexts.get(id)));
  }

  /** The pact's newest record, written or not: what an actor comes back from. */
  record(id: string): PactRecord | undefined {
    return this.unwritten.get(id) ?? this.storedRecord(id);
  }

  /**
   * The pact's record as written to disk: its text and head as one write left them (one snapshot). Read
   * synchronously: a cold actor waits on it, and a point read of LevelDB costs microseconds where the
   * asynchronous one waits for libuv's pool and then for the main thread (docs/ARCHITECTURE.md, Speed).
   */
  storedRecord(id: string): PactRecord | undefined {
    const snapshot = this.level.snapshot();
    try {
      const text = readNow<string>(this.level, this.pactTexts, id, { valueEncoding: 'utf8', snapshot });
      if (text === undefined) return undefined; // a create's, most often: no head either
      const head = readNow<Head>(this.level, this.heads, id, { valueEncoding: 'json', snapshot });
      return head === undefined ? undefined : recordOfStored({ head, text });
    } finally {
      void snapshot.close().catch((error: unknown) => console.error('a read model snapshot could not be closed:', String(error)));
    }
  }

  /**
   * The records of `ids` as written to disk (undefined for a pact with none), each text and head as one
   * write left them: one asynchronous multi-get, one snapshot, for the projector's batches.
   */
  async storedRecords(ids: string[]): Promise<(StoredRecord | undefined)[]> {
    const keys = [...ids.map((id) => this.pactTexts.prefixKey(id, 'utf8')), ...ids.map((id) => this.heads.prefixKey(id, 'utf8'))];
    const values = await this.level.getMany<string, string>(keys, { valueEncoding: 'utf8' });
    return ids.map((_, i) => {
      const [text, head] = [values[i], values[ids.length + i]];
      return text === undefined || head === undefined ? undefined : { text, head: JSON.parse(head) as Head };
    });
  }

  /** Pacts whose next deadline is at or before `time`, earliest first, at most `limit`. */
  async dueBy(time: number, limit: number): Promise<string[]> {
    return this.deadlines.values({ lt: `${pad(time)}!\uffff`, limit }).all();
  }

  /** The earliest deadline of any open pact, or Infinity. */
  async earliestDeadline(): Promise<number> {
    const [first] = await this.deadlines.keys({ limit: 1 }).all();
    return first === undefined ? Infinity : Number(first.slice(0, 15));
  }

  /** Ids of pacts with payouts not yet paid. */
  async *withUnpaidPayouts(): AsyncGenerator<string> {
    yield* this.unpaid.keys();
  }

  /**
   * Makes the stored read model one this code can read: one of another layout (an older version's) is
   * cleared, and the projector then rebuilds it from the journal. Call before anything reads it.
   */
  async open(): Promise<void> {
    if ((await this.meta.get('layout')) === LAYOUT) return;
    const sublevels = [
      this.pactTexts, this.heads, this.unpaid, this.standings, this.deadlines, this.unreplayable, this.summaries, this.index, this.meta, this.level.sublevel('snapshots'),
    ];
    for (const sublevel of sublevels) await sublevel.clear();
    await this.meta.put('layout', LAYOUT);
  }

  async checkpoint(): Promise<number> {
    return ((await this.meta.get('journalSeq')) as number | undefined) ?? 0;
  }

  /** The number of pacts in each state. */
  stateCounts(): Promise<StateCounts> {
    this.counts ??= this.loadCounts();
    return this.counts;
  }

  /** The kept counts; none yet on a read model that has had no write. */
  private async loadCounts(): Promise<StateCounts> {
    const kept = (await this.meta.get('stateCounts')) as StateCounts | undefined;
    return kept ? { ...kept } : (Object.fromEntries(PACT_STATES.map((state) => [state, 0])) as StateCounts);
  }

  /**
   * Stores each pact's newest record, moving its index entries, the journal position `seq` and the pacts
   * found `unreplayable`, in one batch; then forgets the unwritten records it holds.
   */
  async putAll(records: PactRecord[], seq: number, unreplayable: string[] = []): Promise<void> {
    const ids = [...new Set(records.map((r) => r.pact.id))];
    const stored = await this.summaries.getMany(ids);
    const latest = new Map(ids.map((id, i) => [id, stored[i]]));
    const counts = { ...(await this.stateCounts()) };
    const standings = await this.standingsAfter(records, latest);
    const operations: AbstractBatchOperation<JsonLevel, string, unknown>[] = [];
    for (const [party, standing] of standings) operations.push({ type: 'put', key: party, value: standing, sublevel: this.standings });
    for (const { pact, text, seq: headSeq, recentCommands } of records) {
      const previous = latest.get(pact.id);
      const summary = summaryOf(pact);
      if (previous) {
        operations.push(...indexKeys(previous).map((key) => ({ type: 'del' as const, key, sublevel: this.index })));
        counts[previous.state]--;
      }
      const [oldDeadline, newDeadline] = [previous && deadlineKey(previous), deadlineKey(summary)];
      if (oldDeadline && oldDeadline !== newDeadline) operations.push({ type: 'del', key: oldDeadline, sublevel: this.deadlines });
      if (newDeadline) operations.push({ type: 'put', key: newDeadline, value: pact.id, sublevel: this.deadlines });
      counts[pact.state]++;
      operations.push(...indexKeys(summary).map((key) => ({ type: 'put' as const, key, value: pact.id, sublevel: this.index })));
      operations.push({ type: 'put', key: pact.id, value: text, sublevel: this.pactTexts });
      operations.push({ type: 'put', key: pact.id, value: { seq: headSeq, recentCommands }, sublevel: this.heads });
      operations.push({ type: 'put', key: pact.id, value: summary, sublevel: this.summaries });
      operations.push(hasUnpaidPayouts(pact)
        ? { type: 'put', key: pact.id, value: '', sublevel: this.unpaid }
        : { type: 'del', key: pact.id, sublevel: this.unpaid });
      latest.set(pact.id, summary);
    }
    for (const id of unreplayable) operations.push({ type: 'put', key: id, value: '', sublevel: this.unreplayable });
    operations.push({ type: 'put', key: 'journalSeq', value: seq, sublevel: this.meta });
    operations.push({ type: 'put', key: 'stateCounts', value: counts, sublevel: this.meta });
    await this.level.batch(operations as never);
    this.counts = Promise.resolve(counts);
    for (const record of records) {
      const unwritten = this.unwritten.get(record.pact.id);
      if (unwritten && unwritten.seq > record.seq) continue; // reads keep seeing the newer one
      this.unwritten.delete(record.pact.id);
      this.responses.changed(record.pact.id, record.text);
    }
  }

  /** The standings of the parties of the pacts `records` bring to an end (each pact counted once, when it ends). */
  private async standingsAfter(records: PactRecord[], stored: Map<string, PactSummary | undefined>): Promise<Map<string, Standing>> {
    const ending = new Map<string, Pact>();
    for (const { pact } of records) {
      const before = stored.get(pact.id);
      if (isTerminal(pact.state) && !(before && isTerminal(before.state))) ending.set(pact.id, pact);
    }
    const parties = [...new Set([...ending.values()].flatMap((pact) => pact.parties.map((p) => p.party)))];
    const known = await this.standings.getMany(parties);
    const standings = new Map(parties.map((party, i) => [party, { ...(known[i] ?? { terminal: 0, good: 0 }) }]));
    for (const pact of ending.values()) {
      for (const { party } of pact.parties) {
        const standing = standings.get(party)!;
        standing.terminal++;
        if (settledWell(pact, party)) standing.good++;
      }
    }
    return standings;
  }

  /** Each party's `pact.settlement.v1` reputation, as far as this read model has read the journal. */
  async reputations(parties: string[]): Promise<Map<string, number>> {
    const known = await this.standings.getMany(parties);
    return new Map(parties.map((party, i) => [party, reputationOf(known[i])]));
  }

  /**
   * Pacts matching every filter, oldest update first, read from the most selective index (paged as
   * `pageByTime` says).
   */
  async list(filter: ListFilter): Promise<ListPage> {
    const prefix = filter.groupId !== undefined
      ? `group!${filter.groupId}!`
      : filter.party !== undefined
        ? `party!${filter.party}!`
        : filter.state !== undefined
          ? `state!${filter.state}!`
          : 'all!';
    const accept = async ({ id }: Position) => {
      const pact = await this.summaries.get(id);
      return pact && matchesAll(pact, filter) ? pact : undefined;
    };
    const page = await pageByTime(positionsUnder(this.index, prefix, filter.since, filter.limit + 1), accept, filter.limit);
    return { pacts: page.items, nextSince: page.nextSince };
  }
}

/** The deadline index key of a pact's next deadline; undefined when it has none (closed). */
function deadlineKey(pact: PactSummary): string | undefined {
  const deadline = currentDeadline(pact);
  return deadline === null ? undefined : `${pad(deadline)}!${pact.id}`;
}

const hasUnpaidPayouts = (pact: Pact) => pact.payouts.some((p) => p.status !== 'paid');

function matchesAll(pact: PactSummary, filter: ListFilter): boolean {
  return (
    (filter.party === undefined || pact.parties.some((p) => p.party === filter.party)) &&
    (filter.state === undefined || pact.state === filter.state) &&
    (filter.groupId === undefined || pact.groupId === filter.groupId)
  );
}
