import { canonicalDigest, canonicalHashHex } from '../protocol/digest.js';
import { pactError, type PactError } from '../protocol/errors.js';
import type { PartyId } from '../protocol/party.js';
import type { Verifier } from '../protocol/verify-pool.js';

/** What every stream event carries, public or private (escrow-service.md, Events). */
interface EventEnvelope {
  v: 0;
  id: string;
  publisher: PartyId;
  createdAt: string;
  expiresAt: string;
  /** 128 lowercase hex: the publisher's signature of the JCS form of `id` (DECISIONS.md, Agent Stream). */
  signature: string;
}

export interface PublicEvent extends EventEnvelope {
  privacy: 'public';
  channel?: string;
  kind: string;
  tags?: string[];
  recipients?: PartyId[];
  refs?: { type: string; id: string }[];
  body: Record<string, unknown>;
}

/** The signed outer envelope of a client-encrypted event: all the server ever sees of it. */
export interface PrivateEvent extends EventEnvelope {
  privacy: 'private';
  ciphertextAlg: 'ChaCha20-Poly1305';
  nonce: string;
  audience: { keyId: string; enc: string; wrappedKey: string }[];
  ciphertext: string;
}

export type StreamEvent = PublicEvent | PrivateEvent;

/** An event as the journal holds it: the event and when the service took it. */
export interface Received {
  receivedAt: number;
  event: StreamEvent;
}

/** The longest an event may live: seven days from its creation. */
export const MAX_EVENT_LIFETIME_MS = 7 * 86_400_000;
/** How far ahead of the service's clock an event may say it was created. */
export const CREATED_AHEAD_MS = 10 * 60_000;
/** Kinds only the server publishes (its notifications of pact state changes). */
const SERVER_KINDS = /^pact\./;

/** An event's id: `evt_` and the hex SHA-256 of the JCS form of the event without `id` and `signature`. */
export function eventIdOf(event: Omit<StreamEvent, 'id' | 'signature'> & { id?: string; signature?: string }): string {
  const { id: _id, signature: _signature, ...content } = event;
  return `evt_${canonicalHashHex(content)}`;
}

/**
 * Why an event (of the schema's shape) is refused: an id that is not its content's (422), a signature that
 * is not the publisher's over its id (401), a creation more than 10 minutes ahead, an expiry before its
 * creation, more than seven days after it or after `now`, or already past at `now` (422), and for a public event no
 * address or a `pact.*` kind from anyone but `serverParty` (422).
 */
export async function eventProblem(event: StreamEvent, now: number, serverParty: string, verifier: Verifier): Promise<PactError | undefined> {
  if (eventIdOf(event) !== event.id) return pactError('invalid_event', 'the id is not the SHA-256 of the event’s content', { field: 'id' });
  const signed = await verifier.verify({ signer: event.publisher, digest: canonicalDigest(event.id), sig: event.signature });
  if (!signed) return pactError('invalid_signature', 'the signature is not the publisher’s over the id');
  const createdAt = Date.parse(event.createdAt);
  const expiresAt = Date.parse(event.expiresAt);
  if (Number.isNaN(createdAt)) return pactError('invalid_event', 'createdAt is not an ISO 8601 time', { field: 'createdAt' });
  if (Number.isNaN(expiresAt)) return pactError('invalid_event', 'expiresAt is not an ISO 8601 time', { field: 'expiresAt' });
  if (expiresAt <= createdAt || expiresAt - createdAt > MAX_EVENT_LIFETIME_MS) {
    return pactError('invalid_event', 'expiresAt is after createdAt and at most seven days after it', { field: 'expiresAt' });
  }
  if (createdAt > now + CREATED_AHEAD_MS) return pactError('invalid_event', 'createdAt is more than 10 minutes ahead', { field: 'createdAt', now: new Date(now).toISOString() });
  if (expiresAt <= now) return pactError('invalid_event', 'the event has expired', { field: 'expiresAt', now: new Date(now).toISOString() });
  // Never past what the stream keeps: nodes forget an event's id seven days after taking it.
  if (expiresAt - now > MAX_EVENT_LIFETIME_MS) return pactError('invalid_event', 'expiresAt is at most seven days from now', { field: 'expiresAt', now: new Date(now).toISOString() });
  return event.privacy === 'public' ? publicProblem(event, serverParty) : undefined;
}

function publicProblem(event: PublicEvent, serverParty: string): PactError | undefined {
  if (SERVER_KINDS.test(event.kind) && event.publisher !== serverParty) {
    return pactError('invalid_event', 'kinds pact.* are the server’s notifications; only it publishes them', { field: 'kind' });
  }
  if (event.channel === undefined && (event.recipients ?? []).length === 0) {
    return pactError('invalid_event', 'a public event names a channel or recipients', { field: 'channel' });
  }
  for (const field of ['tags', 'recipients'] as const) {
    const values = event[field] ?? [];
    if (new Set(values).size !== values.length) return pactError('invalid_event', `${field} are unique`, { field });
  }
  return undefined;
}
