import { FEE_FROM, PACT_STATES, RAILS } from '../machines/pact/types.js';
import { ACTIONS } from './signed-call.js';
import { AMOUNT_PATTERN } from './money.js';

// JSON Schemas of every body. The validator is strict: no coercion, no removal, no defaults,
// because the signature covers the body exactly as sent.

const MAX_MS = 8_640_000_000_000_000; // the largest JavaScript date
const DAY_MS = 86_400_000;

export const partyId = { type: 'string', pattern: '^ed25519:[1-9A-HJ-NP-Za-km-z]{32,44}$' } as const;
const sig = { type: 'string', pattern: '^[0-9a-f]{128}$' } as const;
const millis = { type: 'integer', minimum: 0, maximum: MAX_MS } as const;
const sha256Hex = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;
/** A group (an offer's id, say): no `!`, which the read model's index keys use as their separator. */
const groupId = { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' } as const;

const money = {
  type: 'object',
  required: ['amount', 'asset'],
  additionalProperties: false,
  properties: {
    amount: { type: 'string', pattern: AMOUNT_PATTERN },
    asset: { type: 'string', pattern: '^[A-Z0-9]{1,16}$' },
  },
} as const;

const shares = {
  type: 'array',
  minItems: 1,
  maxItems: 64,
  items: {
    type: 'object',
    required: ['party', 'bp'],
    additionalProperties: false,
    properties: { party: partyId, bp: { type: 'integer', minimum: 0, maximum: 10_000 } },
  },
} as const;

const window = { type: 'integer', minimum: 1, maximum: 365 * DAY_MS } as const;

const pactSpec = {
  type: 'object',
  required: ['rail', 'parties', 'terms', 'minParties'],
  additionalProperties: false,
  properties: {
    rail: { type: 'string', enum: RAILS },
    parties: {
      type: 'array',
      minItems: 2,
      maxItems: 64,
      items: {
        type: 'object',
        required: ['party', 'deposit', 'bond', 'required'],
        additionalProperties: false,
        properties: { party: partyId, deposit: money, bond: money, required: { type: 'boolean' } },
      },
    },
    proposer: partyId,
    terms: {
      type: 'object',
      required: ['spec'],
      properties: { spec: { type: 'string', minLength: 1, maxLength: 65_536 } },
    },
    minParties: { type: 'integer', minimum: 1, maximum: 64 },
    windows: {
      type: 'object',
      additionalProperties: false,
      properties: { fund: window, perform: window, object: window },
    },
    groupId,
    evaluator: { type: 'object' },
  },
} as const;

const evidenceItem = {
  anyOf: [
    {
      type: 'object',
      required: ['blob'],
      additionalProperties: false,
      properties: { blob: sha256Hex, note: { type: 'string', maxLength: 4_096 } },
    },
    {
      type: 'object',
      required: ['url'],
      additionalProperties: false,
      properties: { url: { type: 'string', minLength: 1, maxLength: 2_048, pattern: '^https?://' } },
    },
    {
      type: 'object',
      required: ['note'],
      additionalProperties: false,
      properties: { note: { type: 'string', minLength: 1, maxLength: 4_096 } },
    },
  ],
} as const;

const emptyCall = { type: 'object', additionalProperties: false, properties: {} } as const;

const calls = {
  'pacts.create': pactSpec,
  'pacts.fund': {
    type: 'object',
    additionalProperties: false,
    properties: { railAddress: { type: 'string', minLength: 1, maxLength: 256 } },
  },
  'pacts.withdraw': emptyCall,
  'pacts.propose': {
    type: 'object',
    required: ['evidence', 'distribution'],
    additionalProperties: false,
    properties: { evidence: { type: 'array', maxItems: 100, items: evidenceItem }, distribution: shares },
  },
  'pacts.cosign': emptyCall,
  'pacts.object': {
    type: 'object',
    required: ['reason'],
    additionalProperties: false,
    properties: { reason: { type: 'string', minLength: 1, maxLength: 4_096 } },
  },
  'pacts.cancel': {
    type: 'object',
    required: ['expiresAt', 'sigs'],
    additionalProperties: false,
    properties: {
      expiresAt: millis,
      sigs: {
        type: 'array',
        minItems: 1,
        maxItems: 64,
        items: {
          type: 'object',
          required: ['signer', 'sig'],
          additionalProperties: false,
          properties: { signer: partyId, sig },
        },
      },
    },
  },
} as const;

export type PactAction = keyof typeof calls;

/** A SignedCall whose `call` has the shape of `action`. A wrong `action` is a 401, checked after this. */
export function signedCallSchema(action: PactAction) {
  return {
    type: 'object',
    required: ['action', 'call', 'pactId', 'stateNonce', 'issuedAt', 'signer', 'sig'],
    additionalProperties: false,
    properties: {
      action: { type: 'string', enum: ACTIONS },
      call: calls[action],
      pactId: { type: 'string', maxLength: 64 },
      stateNonce: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
      issuedAt: millis,
      signer: partyId,
      sig,
    },
  } as const;
}

export const verdictSchema = {
  type: 'object',
  required: ['pactId', 'inputHash', 'distribution', 'feeFrom', 'issuedAt', 'signer', 'sig'],
  additionalProperties: false,
  properties: {
    pactId: { type: 'string', maxLength: 64 },
    inputHash: sha256Hex,
    distribution: shares,
    feeFrom: { type: 'string', enum: FEE_FROM },
    reason: { type: 'string', maxLength: 4_096 },
    issuedAt: millis,
    signer: partyId,
    sig,
  },
} as const;

export const pactIdParams = {
  type: 'object',
  required: ['id'],
  properties: { id: { type: 'string', pattern: '^p_[0-9a-f]{32}$' } },
} as const;

export const listQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    party: partyId,
    state: { type: 'string', enum: PACT_STATES },
    groupId,
    since: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' },
    limit: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
  },
} as const;

/** `recordPayouts` as the payout worker sends it: at most one entry per planned payout of a pact. */
export const paidPayoutsSchema = {
  type: 'array',
  minItems: 1,
  maxItems: 1_024,
  items: {
    type: 'object',
    required: ['key', 'railRef'],
    additionalProperties: false,
    properties: { key: { type: 'string', minLength: 1, maxLength: 256 }, railRef: { type: 'string', minLength: 1, maxLength: 256 } },
  },
} as const;
