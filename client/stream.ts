import { eventIdOf, MAX_EVENT_LIFETIME_MS, type PrivateEvent, type PublicEvent } from '../stream/event.js';
import { signPayload, type KeyPair } from '../protocol/sign.js';

/** What a publisher chooses of a public event; the rest (`v`, `privacy`, `id`, times, `signature`) is made here. */
export type PublicEventFields = Omit<PublicEvent, 'v' | 'privacy' | 'id' | 'publisher' | 'createdAt' | 'expiresAt' | 'signature'>;

/** Adds the id (SHA-256 of the JCS form of the rest) and the publisher's signature of it. */
export function signEvent<T extends PublicEvent | PrivateEvent>(unsigned: Omit<T, 'id' | 'signature'>, key: KeyPair): T {
  const id = eventIdOf(unsigned);
  return { ...unsigned, id, signature: signPayload(id, key) } as T;
}

/** A signed public event by `key`, created at `now` and living `lifetimeMs` (at most seven days). */
export function publicEvent(key: KeyPair, fields: PublicEventFields, now = Date.now(), lifetimeMs = MAX_EVENT_LIFETIME_MS): PublicEvent {
  const unsigned = {
    v: 0 as const,
    privacy: 'public' as const,
    publisher: key.party,
    createdAt: new Date(now).toISOString(),
    expiresAt: new Date(now + lifetimeMs).toISOString(),
    ...fields,
  };
  return signEvent<PublicEvent>(unsigned, key);
}
