import { FEE_FROM, PACT_STATES, RAILS } from '../machines/pact/types.js';
import { ACTIONS } from './signed-call.js';
import { AMOUNT_PATTERN } from './money.js';
import { MAX_INVENTORY } from '../machines/offer/rules.js';

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

const terms = {
  type: 'object',
  required: ['spec'],
  properties: { spec: { type: 'string', minLength: 1, maxLength: 65_536 } },
} as const;
const windows = {
  type: 'object',
  additionalProperties: false,
  properties: { fund: window, perform: window, object: window },
} as const;
/** `evaluator: {}` is accepted (DECISIONS.md); anything in it is refused before the schema runs. */
const emptyEvaluator = { type: 'object', maxProperties: 0 } as const;

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
    terms,
    minParties: { type: 'integer', minimum: 1, maximum: 64 },
    windows,
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
  'access.request': {
    type: 'object',
    required: ['email'],
    additionalProperties: false,
    properties: { email: { type: 'string', minLength: 3, maxLength: 254 }, useCase: { type: 'string', maxLength: 1_000 } },
  },
  'access.verify': {
    type: 'object',
    required: ['otp'],
    additionalProperties: false,
    properties: { otp: { type: 'string', pattern: '^[0-9]{6}$' } },
  },
  'access.admin': {
    type: 'object',
    required: ['action'],
    additionalProperties: false,
    properties: {
      action: { type: 'string', enum: ['allow', 'revoke', 'allow-email', 'deny-email', 'pending'] },
      target: { type: 'string', minLength: 1, maxLength: 254 },
      note: { type: 'string', maxLength: 1_000 },
    },
  },
  'rails.bindAddress': {
    type: 'object',
    required: ['address'],
    additionalProperties: false,
    properties: { rail: { type: 'string', pattern: '^[a-z0-9]{1,32}$' }, address: { type: 'string', minLength: 1, maxLength: 128 } },
  },
  'offers.accept': {
    type: 'object',
    required: ['acceptanceId'],
    additionalProperties: false,
    properties: { acceptanceId: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{1,128}$' } },
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

/** The actions of SignedCalls a route takes; every one but `offers.accept` and the access calls is a pact's. */
export type SignedAction = keyof typeof calls;
export type AccessAction = 'access.request' | 'access.verify' | 'access.admin';
export type PactAction = Exclude<SignedAction, 'offers.accept' | 'rails.bindAddress' | AccessAction>;

/** A SignedCall whose `call` has the shape of `action`. A wrong `action` is a 401, checked after this. */
export function signedCallSchema(action: SignedAction) {
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

/** A tag: no whitespace, and neither `,` (tags are comma-joined in a query) nor `!` (the indexes' separator). */
export const offerTagPattern = '^[^\\s,!]{1,64}$';
const tag = { type: 'string', pattern: offerTagPattern } as const;
export const MAX_OFFER_TEXT = 4_096;

const offerTemplate = {
  type: 'object',
  required: ['rail', 'price', 'buyerBond', 'sellerBond', 'terms'],
  additionalProperties: false,
  properties: { rail: { type: 'string', enum: RAILS }, price: money, buyerBond: money, sellerBond: money, terms, windows, evaluator: emptyEvaluator },
} as const;

/** `POST /offers`: the self-signed offer (DECISIONS.md, Offers). */
export const offerSchema = {
  type: 'object',
  required: ['by', 'tags', 'text', 'expiresAt', 'sig'],
  additionalProperties: false,
  properties: {
    by: partyId,
    tags: { type: 'array', maxItems: 32, items: tag },
    text: { type: 'string', minLength: 1, maxLength: MAX_OFFER_TEXT },
    expiresAt: millis,
    pactId: { type: 'string', pattern: '^p_[0-9a-f]{32}$' },
    template: offerTemplate,
    inventory: { type: 'integer', minimum: 1, maximum: MAX_INVENTORY },
    evaluator: emptyEvaluator,
    sig,
  },
} as const;

/** Fields no offer or template may carry: the evaluator policy and the fee recipient are the server's. */
export const SERVER_OWNED_FIELDS = ['evaluator', 'arbitrationFeeRecipient'] as const;

const offerFilters = {
  tags: { type: 'string', maxLength: 1_024 },
  q: { type: 'string', maxLength: 256 },
  by: partyId,
  since: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$' },
  limit: { type: 'string', pattern: '^[1-9][0-9]{0,2}$' },
} as const;

export const offerSearchQuery = { type: 'object', additionalProperties: false, properties: offerFilters } as const;

export const offerWatchQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { ...offerFilters, timeoutMs: { type: 'string', pattern: '^(0|[1-9][0-9]{0,4})$' } },
} as const;
