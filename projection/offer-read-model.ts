import type { AbstractBatchOperation } from 'abstract-level';
import { isExpired } from '../machines/offer/rules.js';
import type { AcceptCall, Offer } from '../machines/offer/types.js';
import type { JsonLevel } from '../storage/level.js';
import { intersection } from './index-intersection.js';
import { pad, pageByTime, timeKey, type TimePage } from './time-pages.js';

/** An offer's record: the offer and the stream sequence of its last entry. */
export interface OfferRecord {
  offer: Offer;
  seq: number;
}

/**
 * An acceptance whose pact may not exist yet, or may still be cancelled unfunded (it is in CREATED): what
 * it takes to create that pact.
 */
export interface UnfinishedAcceptance {
  pactId: string;
  offerId: string;
  envelope: AcceptCall;
  at: number;
}

export interface Checkpoint {
  /** The offers' journal position the model holds. */
  seq: number;
  /** The `listedAt` of the last offer listed. */
  listedAt: number;
}

export interface OfferFilter {
  /** Every one must be among the offer's tags (case-insensitive). */
  tags: string[];
  /** Every one must be among the words of the offer's text (case-insensitive). */
  words: string[];
  by?: string;
  /** Only offers published after this millisecond. */
  since?: number;
  limit: number;
  /** Offers expired at this time are left out. */
  now: number;
}

/** The words an offer's text is searched by: runs of letters and digits, in lower case. */
export const wordsOf = (text: string): string[] => [...new Set(text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [])];
export const tagKeyOf = (tag: string) => tag.toLowerCase();

/**
 * Index prefixes of an offer that can still be accepted, most selective first: publisher, each tag, each
 * word of its text, all. A sold-out offer has none; an expired one loses them to the sweep.
 */
function indexPrefixes(offer: Offer): string[] {
  if (offer.state !== 'OPEN') return [];
  return [
    `by!${offer.by}!`,
    ...[...new Set(offer.tags.map(tagKeyOf))].map((tag) => `tag!${tag}!`),
    ...wordsOf(offer.text).map((word) => `word!${word}!`),
    'all!',
  ];
}

const indexKeys = (offer: Offer) => indexPrefixes(offer).map((prefix) => timeKey(prefix, offer.listedAt, offer.offerId));
const expiryKey = (offer: Offer) => `${pad(offer.expiresAt)}!${offer.offerId}`;

/**
 * The read model of offers in LevelDB, built only from the offers' journal: each offer's record, the
 * acceptances it has recorded, indexes for search, and acceptances whose pact may not exist yet.
 */
export class OfferReadModel {
  private readonly offers;
  private readonly heads;
  private readonly acceptances;
  private readonly releases;
  private readonly index;
  private readonly expiries;
  private readonly unfinished;
  private readonly meta;

  constructor(private readonly level: JsonLevel) {
    this.offers = level.sublevel<string, string>('offers', { valueEncoding: 'utf8' });
    this.heads = level.sublevel<string, number>('offer-heads', { valueEncoding: 'json' });
    this.acceptances = level.sublevel<string, string>('offer-acceptances', { valueEncoding: 'utf8' });
    this.releases = level.sublevel<string, string>('offer-releases', { valueEncoding: 'utf8' });
    /** Each key `<prefix><listedAt>!<offerId>` holds the offer's `expiresAt`, so a search filters without reading offers. */
    this.index = level.sublevel<string, string>('offer-index', { valueEncoding: 'utf8' });
    this.expiries = level.sublevel<string, string>('offer-expiries', { valueEncoding: 'utf8' });
    this.unfinished = level.sublevel<string, UnfinishedAcceptance>('offer-unfinished', { valueEncoding: 'json' });
    this.meta = level.sublevel<string, unknown>('offer-meta', { valueEncoding: 'json' });
  }

  /**
   * Makes the stored model one of the offers' journal created at `streamCreated`: one built from another
   * (the stream was made anew, a NATS swapped) is cleared, and the projector rebuilds it.
   */
  async open(streamCreated: string): Promise<void> {
    if ((await this.meta.get('stream')) === streamCreated) return;
    for (const sublevel of [this.offers, this.heads, this.acceptances, this.releases, this.index, this.expiries, this.unfinished, this.meta]) await sublevel.clear();
    await this.meta.put('stream', streamCreated);
  }

  /** How far the model has read the journal, and the last offer's place in the listing. */
  async checkpoint(): Promise<Checkpoint> {
    const [seq, listedAt] = await this.meta.getMany(['journalSeq', 'listedAt']);
    return { seq: (seq as number | undefined) ?? 0, listedAt: (listedAt as number | undefined) ?? 0 };
  }

  async record(offerId: string): Promise<OfferRecord | undefined> {
    const [text, seq] = await Promise.all([this.offers.get(offerId), this.heads.get(offerId)]);
    return text === undefined || seq === undefined ? undefined : { offer: JSON.parse(text) as Offer, seq };
  }

  async get(offerId: string): Promise<Offer | undefined> {
    const text = await this.offers.get(offerId);
    return text === undefined ? undefined : (JSON.parse(text) as Offer);
  }

  /** Whether the offer's journal, as far as written here, holds an acceptance that makes `pactId`. */
  async hasAcceptance(offerId: string, pactId: string): Promise<boolean> {
    return (await this.acceptances.get(`${offerId}!${pactId}`)) !== undefined;
  }

  /** Whether the offer's journal, as far as written here, gave back the unit of the acceptance that made `pactId`. */
  async hasRelease(offerId: string, pactId: string): Promise<boolean> {
    return (await this.releases.get(`${offerId}!${pactId}`)) !== undefined;
  }

  /**
   * Stores each offer's newest record, moving its index entries, the acceptances `accepted` (each also
   * unfinished until its pact is out of CREATED), the units `released` and how far the journal was read,
   * in one batch.
   */
  async putAll(records: OfferRecord[], accepted: UnfinishedAcceptance[], reached: Checkpoint, released: { offerId: string; pactId: string }[] = []): Promise<void> {
    const ids = records.map((r) => r.offer.offerId);
    const stored = (await this.offers.getMany(ids)).map((text) => (text === undefined ? undefined : (JSON.parse(text) as Offer)));
    const operations: AbstractBatchOperation<JsonLevel, string, unknown>[] = [];
    records.forEach(({ offer, seq: head }, i) => {
      const previous = stored[i];
      if (previous) {
        operations.push(...indexKeys(previous).map((key) => ({ type: 'del' as const, key, sublevel: this.index })));
        operations.push({ type: 'del', key: expiryKey(previous), sublevel: this.expiries });
      }
      operations.push(...indexKeys(offer).map((key) => ({ type: 'put' as const, key, value: String(offer.expiresAt), sublevel: this.index })));
      if (offer.state === 'OPEN') operations.push({ type: 'put', key: expiryKey(offer), value: '', sublevel: this.expiries });
      operations.push({ type: 'put', key: offer.offerId, value: JSON.stringify(offer), sublevel: this.offers });
      operations.push({ type: 'put', key: offer.offerId, value: head, sublevel: this.heads });
    });
    for (const acceptance of accepted) {
      operations.push({ type: 'put', key: `${acceptance.offerId}!${acceptance.pactId}`, value: '', sublevel: this.acceptances });
      operations.push({ type: 'put', key: acceptance.pactId, value: acceptance, sublevel: this.unfinished });
    }
    for (const { offerId, pactId } of released) operations.push({ type: 'put', key: `${offerId}!${pactId}`, value: '', sublevel: this.releases });
    operations.push({ type: 'put', key: 'journalSeq', value: reached.seq, sublevel: this.meta });
    operations.push({ type: 'put', key: 'listedAt', value: reached.listedAt, sublevel: this.meta });
    await this.level.batch(operations as never);
  }

  /**
   * Open offers matching every filter, oldest first, as the JSON text of each: the positions present under
   * the publisher's, every word's and every tag's index (all offers' without any), not expired at `now`.
   */
  async search(filter: OfferFilter): Promise<TimePage<string>> {
    // Most selective first, as far as one can tell without counting: a publisher, then words (a text has
    // many, drawn from a large vocabulary), then tags (a few, shared by many offers).
    const prefixes = [
      ...(filter.by !== undefined ? [`by!${filter.by}!`] : []),
      ...filter.words.map((word) => `word!${word}!`),
      ...filter.tags.map((tag) => `tag!${tag}!`),
    ];
    const positions = intersection(this.index, prefixes.length > 0 ? prefixes : ['all!'], filter.since);
    const page = await pageByTime(positions, async ({ hit, id, value }) => (hit && Number(value) > filter.now ? id : undefined), filter.limit);
    const texts = await this.offers.getMany(page.items);
    return { items: texts.filter((text): text is string => text !== undefined), nextSince: page.nextSince };
  }

  /** Takes offers expired by `now` out of the search indexes (their records stay); resolves to how many. */
  async sweepExpired(now: number, batchSize = 1_000): Promise<number> {
    let swept = 0;
    for (;;) {
      const keys = await this.expiries.keys({ lte: `${pad(now)}!\uffff`, limit: batchSize }).all();
      if (keys.length === 0) return swept;
      const offers = await this.offers.getMany(keys.map((key) => key.slice(16)));
      const operations = keys.flatMap((key, i) => [
        { type: 'del' as const, key, sublevel: this.expiries },
        ...(offers[i] ? indexKeys(JSON.parse(offers[i]!) as Offer).map((indexKey) => ({ type: 'del' as const, key: indexKey, sublevel: this.index })) : []),
      ]);
      await this.level.batch(operations as never);
      swept += keys.length;
    }
  }

  /** Acceptances recorded here whose pact was not yet seen to exist, or to leave CREATED. */
  async *unfinishedAcceptances(): AsyncGenerator<UnfinishedAcceptance> {
    yield* this.unfinished.values();
  }

  /** The pact of this acceptance is out of CREATED (its unit given back if it was cancelled unfunded): finished. */
  finished(pactId: string): Promise<void> {
    return this.unfinished.del(pactId);
  }
}

/** An offer as filters look at it: its tags and the words of its text as sets, made once. */
export interface OfferView {
  offer: Offer;
  tags: Set<string>;
  words: Set<string>;
}

export const viewOf = (offer: Offer): OfferView => ({ offer, tags: new Set(offer.tags.map(tagKeyOf)), words: new Set(wordsOf(offer.text)) });

/** What a search finds, said plainly: open, not expired at `now`, by the publisher, every tag and every word. */
export function matchesFilter({ offer, tags, words }: OfferView, filter: Omit<OfferFilter, 'limit' | 'since'>): boolean {
  return (
    offer.state === 'OPEN' && !isExpired(offer, filter.now) &&
    (filter.by === undefined || offer.by === filter.by) &&
    filter.tags.every((tag) => tags.has(tag)) && filter.words.every((word) => words.has(word))
  );
}
