import type { AbstractBatchOperation } from 'abstract-level';
import type { Pact, PactState } from '../machines/pact/types.js';
import type { JsonLevel } from '../storage/level.js';

export interface ListFilter {
  party?: string;
  state?: PactState;
  groupId?: string;
  /** Exclusive lower bound on `updatedAt`, in milliseconds. */
  since?: number;
  limit: number;
}

export interface ListPage {
  pacts: Pact[];
  /** Pass as `since` for the next page; null when this page is the last. */
  nextSince: number | null;
}

const SCAN_LIMIT = 5_000;
const pad = (ms: number) => String(ms).padStart(15, '0');

/** Index prefixes, most selective first. */
function indexPrefixes(pact: Pick<Pact, 'parties' | 'state' | 'groupId'>): string[] {
  return [
    ...(pact.groupId !== null ? [`group!${pact.groupId}!`] : []),
    ...pact.parties.map((p) => `party!${p.party}!`),
    `state!${pact.state}!`,
    'all!',
  ];
}

function indexKeys(pact: Pact): string[] {
  return indexPrefixes(pact).map((prefix) => `${prefix}${pad(pact.updatedAt)}!${pact.id}`);
}

/**
 * The read model of pacts in LevelDB: each pact's latest record plus indexes by group, party, state and
 * update time. Built only from the journal, so it can be deleted and rebuilt.
 */
export class ReadModel {
  private readonly pacts;
  private readonly index;
  private readonly meta;

  constructor(private readonly level: JsonLevel) {
    this.pacts = level.sublevel<string, Pact>('pacts', { valueEncoding: 'json' });
    this.index = level.sublevel<string, string>('index', { valueEncoding: 'utf8' });
    this.meta = level.sublevel<string, number>('meta', { valueEncoding: 'json' });
  }

  get(id: string): Promise<Pact | undefined> {
    return this.pacts.get(id);
  }

  async checkpoint(): Promise<number> {
    return (await this.meta.get('journalSeq')) ?? 0;
  }

  /** Stores each pact's newest record, moving its index entries, and the journal position `seq`, in one batch. */
  async putAll(pacts: Pact[], seq: number): Promise<void> {
    const ids = [...new Set(pacts.map((p) => p.id))];
    const stored = await this.pacts.getMany(ids);
    const latest = new Map(ids.map((id, i) => [id, stored[i]]));
    const operations: AbstractBatchOperation<JsonLevel, string, unknown>[] = [];
    for (const pact of pacts) {
      const previous = latest.get(pact.id);
      if (previous) operations.push(...indexKeys(previous).map((key) => ({ type: 'del' as const, key, sublevel: this.index })));
      operations.push(...indexKeys(pact).map((key) => ({ type: 'put' as const, key, value: pact.id, sublevel: this.index })));
      operations.push({ type: 'put', key: pact.id, value: pact, sublevel: this.pacts });
      latest.set(pact.id, pact);
    }
    operations.push({ type: 'put', key: 'journalSeq', value: seq, sublevel: this.meta });
    await this.level.batch(operations as never);
  }

  /**
   * Pacts matching every filter, oldest update first. A page never splits a millisecond: it may hold more
   * than `limit` pacts when several share the last one's, so paging by `since` never skips one. Work is
   * bounded: after SCAN_LIMIT index entries the page ends before the millisecond it reached.
   */
  async list(filter: ListFilter): Promise<ListPage> {
    const prefix = filter.groupId !== undefined
      ? `group!${filter.groupId}!`
      : filter.party !== undefined
        ? `party!${filter.party}!`
        : filter.state !== undefined
          ? `state!${filter.state}!`
          : 'all!';
    const start = filter.since !== undefined ? `${prefix}${pad(filter.since)}!\uffff` : prefix;
    const pacts: { at: number; pact: Pact }[] = [];
    let scanned = 0;
    for await (const [key, id] of this.index.iterator({ gt: start, lt: `${prefix}\uffff` })) {
      const at = Number(key.slice(prefix.length, prefix.length + 15));
      const lastAt = pacts.at(-1)?.at;
      if (pacts.length >= filter.limit && at !== lastAt) return { pacts: pacts.map((p) => p.pact), nextSince: lastAt! };
      if (++scanned > SCAN_LIMIT) {
        return { pacts: pacts.filter((p) => p.at < at).map((p) => p.pact), nextSince: at - 1 };
      }
      const pact = await this.pacts.get(id);
      if (pact && matchesAll(pact, filter)) pacts.push({ at, pact });
    }
    return { pacts: pacts.map((p) => p.pact), nextSince: null };
  }

  async countInState(state: PactState): Promise<number> {
    let count = 0;
    for await (const _ of this.index.keys({ gt: `state!${state}!`, lt: `state!${state}!\uffff` })) count++;
    return count;
  }

  async *inStates(states: PactState[]): AsyncGenerator<Pact> {
    for (const state of states) {
      for await (const id of this.index.values({ gt: `state!${state}!`, lt: `state!${state}!\uffff` })) {
        const pact = await this.pacts.get(id);
        if (pact) yield pact;
      }
    }
  }
}

function matchesAll(pact: Pact, filter: ListFilter): boolean {
  return (
    (filter.party === undefined || pact.parties.some((p) => p.party === filter.party)) &&
    (filter.state === undefined || pact.state === filter.state) &&
    (filter.groupId === undefined || pact.groupId === filter.groupId)
  );
}
