import { partyId } from '../protocol/schemas.js';

// JSON Schemas of the Agent Stream's bodies. An event that does not fit its schema is 422 (the spec's
// "invalid event schema"); a pull that does not fit is 400.

/** RFC 3339 with a zone (`Z` or an offset): every node reads it as the same instant. */
const iso = { type: 'string', pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\\.[0-9]{1,9})?(Z|[+-][0-9]{2}:[0-9]{2})$' } as const;
const sig = { type: 'string', pattern: '^[0-9a-f]{128}$' } as const;
const eventId = { type: 'string', pattern: '^evt_[0-9a-f]{64}$' } as const;
const base64url = { type: 'string', pattern: '^[A-Za-z0-9_-]*$' } as const;
const name = { type: 'string', minLength: 1, maxLength: 256 } as const;

const envelope = {
  v: { const: 0 },
  id: eventId,
  publisher: partyId,
  createdAt: iso,
  expiresAt: iso,
  signature: sig,
} as const;

export const publicEventSchema = {
  type: 'object',
  required: ['v', 'privacy', 'id', 'publisher', 'kind', 'createdAt', 'expiresAt', 'body', 'signature'],
  additionalProperties: false,
  properties: {
    ...envelope,
    privacy: { const: 'public' },
    channel: name,
    kind: name,
    tags: { type: 'array', maxItems: 64, items: name },
    recipients: { type: 'array', maxItems: 256, items: partyId },
    refs: {
      type: 'array',
      maxItems: 64,
      items: { type: 'object', required: ['type', 'id'], additionalProperties: false, properties: { type: name, id: name } },
    },
    body: { type: 'object' },
  },
} as const;

export const privateEventSchema = {
  type: 'object',
  required: ['v', 'privacy', 'id', 'publisher', 'createdAt', 'expiresAt', 'ciphertextAlg', 'nonce', 'audience', 'ciphertext', 'signature'],
  additionalProperties: false,
  properties: {
    ...envelope,
    privacy: { const: 'private' },
    ciphertextAlg: { const: 'ChaCha20-Poly1305' },
    /** 12 bytes, unpadded base64url. */
    nonce: { type: 'string', pattern: '^[A-Za-z0-9_-]{16}$' },
    audience: {
      type: 'array',
      minItems: 1,
      maxItems: 64,
      items: {
        type: 'object',
        required: ['keyId', 'enc', 'wrappedKey'],
        additionalProperties: false,
        properties: { keyId: { type: 'string', pattern: '^hpke_[A-Za-z0-9_-]{1,128}$' }, enc: base64url, wrappedKey: base64url },
      },
    },
    ciphertext: base64url,
  },
} as const;

const parties = { type: 'array', maxItems: 64, items: partyId } as const;
const names = { type: 'array', maxItems: 64, items: name } as const;

/** `POST /v0/pull` (DECISIONS.md, Agent Stream: defaults `limit` 50, `waitSeconds` 0, privacy `public`). */
export const pullSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    cursor: { anyOf: [{ type: 'null' }, { type: 'string', pattern: '^cur_[A-Za-z0-9_-]{1,32}$' }] },
    start: {
      anyOf: [
        { enum: ['latest', 'earliest'] },
        { type: 'object', required: ['since'], additionalProperties: false, properties: { since: iso } },
      ],
    },
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    waitSeconds: { type: 'integer', minimum: 0, maximum: 30 },
    filter: {
      type: 'object',
      additionalProperties: false,
      properties: {
        privacy: { type: 'array', minItems: 1, maxItems: 2, uniqueItems: true, items: { enum: ['public', 'private'] } },
        public: {
          type: 'object',
          additionalProperties: false,
          properties: { channels: names, recipients: parties, kinds: names, tagsAll: names },
        },
        private: {
          type: 'object',
          additionalProperties: false,
          properties: { keyIds: { type: 'array', maxItems: 64, items: { type: 'string', pattern: '^hpke_[A-Za-z0-9_-]{1,128}$' } } },
        },
        publishersAllow: parties,
        publishersDeny: parties,
        reputation: {
          type: 'object',
          required: ['provider', 'minimum'],
          additionalProperties: false,
          properties: { provider: { const: 'pact.settlement.v1' }, minimum: { type: 'number', minimum: 0, maximum: 1 } },
        },
        maxPerPublisherPerHour: { type: 'integer', minimum: 1, maximum: 1_000_000 },
      },
    },
  },
} as const;
