import { pactError, type PactError } from '../protocol/errors.js';
import type { Facets } from './event-record.js';
import type { EventStore } from './event-store.js';

/** The filter of `POST /v0/pull`, as its schema lets it through. */
export interface PullFilter {
  privacy?: ('public' | 'private')[];
  public?: { channels?: string[]; recipients?: string[]; kinds?: string[]; tagsAll?: string[] };
  private?: { keyIds?: string[] };
  publishersAllow?: string[];
  publishersDeny?: string[];
  reputation?: { provider: string; minimum: number };
  maxPerPublisherPerHour?: number;
}

export interface PullRequest {
  cursor?: string | null;
  start?: 'latest' | 'earliest' | { since: string };
  limit?: number;
  waitSeconds?: number;
  filter?: PullFilter;
}

export interface PullPage {
  /** The events' JSON texts, in stream order. */
  events: string[];
  nextCursor: string;
  hasMore: boolean;
}

/** Publishers' reputations (`pact.settlement.v1`, from the pact read model). */
export type Reputations = (publishers: string[]) => Promise<Map<string, number>>;

export const DEFAULT_LIMIT = 50;
/** A pull reads at most this many events, however selective its filter: then `hasMore` with a cursor past them. */
export const SCAN_BOUND = 1_000;
/**
 * …and stops after the event that brings the text it has read to this many characters (JavaScript's
 * UTF-16 units), since the store reads each event's text with its facets.
 */
export const SCAN_TEXT_BOUND = 4 * 1024 * 1024;

export const cursorOf = (seq: number) => `cur_${Buffer.from(String(seq)).toString('base64url')}`;

/** The stream sequence a cursor stands after; undefined for one this service did not make. */
export function seqOfCursor(cursor: string): number | undefined {
  const seq = Number(Buffer.from(cursor.slice(4), 'base64url').toString());
  return Number.isSafeInteger(seq) && seq >= 0 && cursorOf(seq) === cursor ? seq : undefined;
}

/** Where a pull starts (exclusive stream sequence), or why it cannot (400). */
export async function startOf(request: PullRequest, store: EventStore): Promise<number | PactError> {
  const { cursor, start } = request;
  if (cursor !== undefined && cursor !== null) {
    if (start !== undefined) return pactError('invalid_request', 'start cannot be combined with a cursor', { field: 'start' });
    return seqOfCursor(cursor) ?? pactError('invalid_request', 'not a cursor of this service', { field: 'cursor' });
  }
  if (start === undefined || start === 'latest') return store.checkpoint();
  if (start === 'earliest') return 0;
  const since = Date.parse(start.since);
  if (Number.isNaN(since)) return pactError('invalid_request', 'start.since is not an ISO 8601 time', { field: 'start.since' });
  return store.seqBefore(since);
}

/**
 * Matching events after stream sequence `after`, at most `limit`, reading at most SCAN_BOUND events and
 * SCAN_TEXT_BOUND of their text.
 * `hasMore` says an event is stored past `nextCursor` now (after a full page, or past the bound), so more
 * may match.
 */
export async function pullPage(
  store: EventStore,
  after: number,
  limit: number,
  filter: PullFilter,
  now: number,
  reputations: Reputations,
): Promise<PullPage> {
  // A publisher's reputation is read once per pull, when the filter asks for one.
  const known = new Map<string, boolean>();
  const trusted = async (publisher: string) => {
    if (!filter.reputation) return true;
    if (!known.has(publisher)) known.set(publisher, ((await reputations([publisher])).get(publisher) ?? 0) >= filter.reputation.minimum);
    return known.get(publisher)!;
  };
  const matching: string[] = [];
  let reached = after;
  let read = 0;
  let textRead = 0;
  const page = (hasMore: boolean): PullPage => ({ events: matching, nextCursor: cursorOf(reached), hasMore });
  // Events are asked for one past a full page and past the bound: whether it exists is `hasMore`.
  for await (const chunk of store.eventChunks(after, SCAN_BOUND + 1, limit + 1, SCAN_TEXT_BOUND)) {
    for (const { seq, facets, text } of chunk) {
      if (matching.length === limit || read === SCAN_BOUND || textRead >= SCAN_TEXT_BOUND) return page(true);
      reached = seq;
      read++;
      textRead += text.length;
      if (matches(facets, filter, now) && (await trusted(facets.publisher))) matching.push(text);
    }
  }
  return page(false);
}

/** Whether an event's facets pass every part of the filter (DECISIONS.md, Agent Stream). */
export function matches(facets: Facets, filter: PullFilter, now: number): boolean {
  if (facets.expiresAt <= now) return false;
  if (!(filter.privacy ?? ['public']).includes(facets.privacy)) return false;
  if (filter.publishersAllow && !filter.publishersAllow.includes(facets.publisher)) return false;
  if (filter.publishersDeny?.includes(facets.publisher)) return false;
  if (filter.maxPerPublisherPerHour !== undefined && facets.ordinal > filter.maxPerPublisherPerHour) return false;
  return facets.privacy === 'public' ? publicMatches(facets, filter.public ?? {}) : privateMatches(facets, filter.private ?? {});
}

function publicMatches(facets: Facets, filter: NonNullable<PullFilter['public']>): boolean {
  const { channels, recipients, kinds, tagsAll } = filter;
  // Channels and recipients are alternate addresses: either may match.
  if (channels || recipients) {
    const byChannel = facets.channel !== undefined && (channels ?? []).includes(facets.channel);
    const byRecipient = (facets.recipients ?? []).some((r) => (recipients ?? []).includes(r));
    if (!byChannel && !byRecipient) return false;
  }
  if (kinds && !kinds.includes(facets.kind!)) return false;
  return (tagsAll ?? []).every((tag) => (facets.tags ?? []).includes(tag));
}

/** A private event is found by the key ids of its audience (DECISIONS.md): a filter without key ids finds none. */
const privateMatches = (facets: Facets, { keyIds }: NonNullable<PullFilter['private']>) =>
  (facets.keyIds ?? []).some((keyId) => (keyIds ?? []).includes(keyId));
