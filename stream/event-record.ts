import type { Received, StreamEvent } from './event.js';

/** What a pull filters on, kept beside each event so that a pull never parses events it does not return. */
export interface Facets {
  privacy: StreamEvent['privacy'];
  publisher: string;
  /** Milliseconds. */
  expiresAt: number;
  /** When the service took the event, on its clock (milliseconds). */
  receivedAt: number;
  /** The event's place among its publisher's events of the same hour (1 for the first). */
  ordinal: number;
  channel?: string;
  kind?: string;
  tags?: string[];
  recipients?: string[];
  keyIds?: string[];
}

/** An event as a pull reads it: its stream sequence, its facets, and its JSON text as stored (never parsed). */
export interface StoredEvent {
  seq: number;
  facets: Facets;
  text: string;
}

export function facetsOf({ receivedAt, event }: Received, ordinal: number): Facets {
  const base = { privacy: event.privacy, publisher: event.publisher, expiresAt: Date.parse(event.expiresAt), receivedAt, ordinal };
  if (event.privacy === 'private') return { ...base, keyIds: event.audience.map((a) => a.keyId) };
  return {
    ...base,
    kind: event.kind,
    ...(event.channel !== undefined ? { channel: event.channel } : {}),
    ...(event.tags ? { tags: event.tags } : {}),
    ...(event.recipients ? { recipients: event.recipients } : {}),
  };
}

/**
 * The store's one value per event: its facets' JSON, a newline, its text. One read gives a pull both what it
 * filters on and what it returns. `JSON.stringify` writes no raw newline, so the first one ends the facets.
 */
export const recordOf = (facets: Facets, text: string): string => `${JSON.stringify(facets)}\n${text}`;

export function readRecord(record: string): Omit<StoredEvent, 'seq'> {
  const end = record.indexOf('\n');
  if (end < 0) throw new Error('an Agent Stream record without its facets: the node\'s LevelDB is damaged');
  return { facets: JSON.parse(record.slice(0, end)) as Facets, text: record.slice(end + 1) };
}
