import { STATUS_CODES } from 'node:http';
import type { OpenAPIV3_1 } from 'openapi-types';
import { PACT_STATES } from '../machines/pact/types.js';
import { OFFER_STATES } from '../machines/offer/types.js';
import type { ErrorCode } from '../protocol/errors.js';
import { partyId } from '../protocol/schemas.js';

// What the routes answer, as OpenAPI response objects, for GET /openapi.json only. They never reach
// Fastify (gateway/openapi.ts adds them to the document, not to the routes): a route's response schema
// would turn on fast-json-stringify, which drops every field a schema does not name.

export type Schema = OpenAPIV3_1.SchemaObject | OpenAPIV3_1.ReferenceObject;

/**
 * An OpenAPI response object as @fastify/swagger reads it from a route's `response`: `headers` as JSON
 * Schemas with a description, `content` by media type.
 */
export interface ResponseObject {
  description: string;
  headers?: Record<string, OpenAPIV3_1.SchemaObject>;
  content: Record<string, { schema: Schema }>;
}

type ComponentName = 'Error' | 'Pact' | 'Offer' | 'Requirement';
const component = (name: ComponentName): Schema => ({ $ref: `#/components/schemas/${name}` });
export const json = (description: string, schema: Schema): ResponseObject => ({ description, content: { 'application/json': { schema } } });
const text = (description: string, type: string): ResponseObject => ({ description, content: { [type]: { schema: { type: 'string' } } } });
export const object = (required: string[], properties: Record<string, Schema>): OpenAPIV3_1.SchemaObject => ({ type: 'object', required, properties });
const millis: Schema = { type: 'integer', minimum: 0 };
const money = object(['amount', 'asset'], { amount: { type: 'string', description: 'minor units' }, asset: { type: 'string' } });

/** The shared schemas: `#/components/schemas/<name>`. Each names the fields always present; more may come. */
export const COMPONENTS: Record<ComponentName, OpenAPIV3_1.SchemaObject> = {
  Error: {
    ...object(['error', 'message'], {
      error: { type: 'string', description: 'a stable code; each response lists the codes it may carry' },
      message: { type: 'string', description: 'for people; may change' },
    }),
    description: 'Every refusal: `{ error, message, ...details }`.',
  },
  Pact: object(
    ['id', 'state', 'stateNonce', 'rail', 'asset', 'parties', 'proposer', 'terms', 'minParties', 'windows', 'evaluator', 'escrowAccount'],
    {
      id: { type: 'string' },
      state: { enum: [...PACT_STATES] },
      stateNonce: { type: 'integer', description: 'signed calls on the pact carry it; every recorded change increments it' },
      parties: { type: 'array', items: object(['party', 'deposit', 'bond', 'required', 'confirmed'], { party: partyId, deposit: money, bond: money }) },
      proposer: partyId,
    },
  ),
  Offer: object(['offerId', 'by', 'tags', 'text', 'expiresAt', 'remaining', 'state', 'sig'], {
    offerId: { type: 'string' },
    by: partyId,
    state: { enum: [...OFFER_STATES] },
  }),
  Requirement: object(['rail', 'amount', 'asset', 'payTo', 'railData'], { rail: { type: 'string' }, amount: money, payTo: { type: 'string' }, railData: { type: 'object' } }),
};

const accessMode: Schema = { enum: ['open', 'invite'] };
const accessStatus: Schema = { enum: ['none', 'pending', 'allowed', 'revoked'] };

/** What each kind of route answers when it succeeds (200). */
export const SUCCESS = {
  pact: json('`{ pact }`: the pact as it now is', object(['pact'], { pact: component('Pact') })),
  fundedPact: {
    ...json('`{ pact }`: the pact as it now is; a paid call on a real rail also carries the settlement', object(['pact'], { pact: component('Pact') })),
    headers: {
      'x-payment-response': { type: 'string', description: 'x402: base64 JSON `{ success, transaction, network, payer }` (also as `payment-response`)' },
      'payment-receipt': { type: 'string', description: 'mpp: the Payment receipt (base64url JSON `{ method, reference, status, timestamp }`)' },
    },
  },
  pactPage: json('`{ pacts, nextSince }`: pact summaries; `nextSince` is the cursor of the next page (null: none)', object(['pacts', 'nextSince'], {
    pacts: { type: 'array', items: { type: 'object' } },
    nextSince: { type: ['integer', 'null'] },
  })),
  offer: json('`{ offer }`: the offer as listed', object(['offer'], { offer: component('Offer') })),
  offerPage: json('`{ offers, nextSince }`: matching offers (a watch that times out: none)', object(['offers', 'nextSince'], {
    offers: { type: 'array', items: component('Offer') },
    nextSince: { type: ['integer', 'null'] },
  })),
  blobHash: json('`{ hash }`: the SHA-256 of the bytes kept', object(['hash'], { hash: { type: 'string' } })),
  blobLink: json('`{ url, expiresAt }`: a download link (relative to this server when it stores the blobs)', object(['url', 'expiresAt'], {
    url: { type: 'string' },
    expiresAt: millis,
  })),
  blobBytes: { description: 'The blob’s bytes', content: { 'application/octet-stream': { schema: { type: 'string', format: 'binary' } } } },
  eventAccepted: json('`{ accepted: true, eventId }` (publishing the same event again answers the same)', object(['accepted', 'eventId'], {
    accepted: { const: true },
    eventId: { type: 'string' },
  })),
  pullPage: json('`{ events, nextCursor, hasMore }`', object(['events', 'nextCursor', 'hasMore'], {
    events: { type: 'array', items: { type: 'object' } },
    nextCursor: { type: 'string' },
    hasMore: { type: 'boolean' },
  })),
  accessRequested: json('`{ mode, sent, expiresAt }`: a code is mailed (open mode: `{ mode, status: allowed, sent: false }`)', object(['mode', 'sent'], {
    mode: accessMode,
    sent: { type: 'boolean' },
    expiresAt: millis,
  })),
  accessVerified: json('`{ mode, party, status }`: `allowed`, or `pending` the operator’s approval', object(['mode', 'party', 'status'], {
    mode: accessMode,
    party: partyId,
    status: accessStatus,
  })),
  accessStatus: json('`{ mode, status }`', object(['mode', 'status'], { mode: accessMode, status: accessStatus })),
  accessAdmin: json('`{ mode, ... }`: the party’s access after `allow` or `revoke`, `rules` after a rule change, `pending` for `pending`', object(['mode'], {
    mode: accessMode,
  })),
  health: json('The server’s state: rails, access mode, evaluator policy, pending work', object(
    ['ok', 'time', 'version', 'rails', 'access', 'evaluator', 'arbitrationFeeRecipient', 'serverParty', 'paymentRails', 'payoutReadiness', 'pending', 'durableKeys'],
    { ok: { type: 'boolean' }, problems: { type: 'array', items: { type: 'string' } }, time: millis, version: { type: 'string' } },
  )),
  landingPage: text('The landing page', 'text/html'),
  agentsMd: text('Onboarding for agents, naming this server by the host the client used', 'text/markdown'),
  llmsTxt: text('A small index of this server’s documents', 'text/plain'),
  installer: text('A POSIX shell script that installs the `pact` CLI from `/pact-cli.tgz` into `$PACT_PREFIX` (default `~/.pact/cli`)', 'text/x-shellscript'),
  cliPackage: {
    description: 'The `pact-cli` npm package (the CLI and its SDK), the same bytes for a version; `ETag` is their SHA-256, and `If-None-Match` with it answers 304',
    headers: { etag: { type: 'string', description: 'the SHA-256 of the bytes, quoted' } },
    content: { 'application/gzip': { schema: { type: 'string', format: 'binary' } } },
  },
  openApiDocument: json('This document', { type: 'object' }),
  railAddress: json('`{ rail, party, address, boundAt }`: the address bound (the first one, when this is a repeat)', object(['rail', 'party', 'address', 'boundAt'], {
    rail: { type: 'string' },
    party: { type: 'string' },
    address: { type: 'string' },
    boundAt: millis,
  })),
  machinesPage: text('Every state machine’s statechart, drawn from its definition', 'text/html'),
  stylesheet: text('The machine pages’ stylesheet', 'text/css'),
  script: text('The live view’s script', 'text/javascript'),
  livePactPage: text('The pact chart with the pact’s state highlighted and its journal, kept current by server-sent events', 'text/html'),
  journalEvents: text(
    'Server-sent events: one `entry` event per applied command (`data`: `{ seq, nonce, at, signer, event, state?, payouts? }`, `id`: the journal sequence), those there now and then each as it lands; `Last-Event-ID` resumes after one',
    'text/event-stream',
  ),
} satisfies Record<string, ResponseObject>;

export type Success = keyof typeof SUCCESS;

/** The details some codes add to the error body, beside `error` and `message`. */
const DETAILS: Partial<Record<ErrorCode, Record<string, Schema>>> = {
  invalid_request: { field: { type: 'string', description: 'the failing field, when there is one' } },
  too_large: { field: { type: 'string' }, limit: { type: 'integer', description: 'bytes' } },
  stateNonce_mismatch: { currentNonce: { type: 'integer', description: 'sign again on this nonce' } },
  invalid_state: { state: { type: 'string' } },
  access_required: {
    status: accessStatus,
    request: { type: 'object', description: 'how to ask for access: POST /access/request, then POST /access/verify' },
  },
  payment_required: { requirement: component('Requirement') },
  payment_failed: {
    reason: { enum: ['invalid_proof', 'insufficient_funds', 'wrong_amount', 'wrong_recipient', 'wrong_network', 'expired', 'proof_already_used', 'wrong_payer', 'payment_reverted'] },
    requirement: component('Requirement'),
  },
  inputHash_mismatch: { inputHash: { type: 'string', description: 'the pact’s' } },
  stale_issuedAt: { now: millis },
  too_early: { now: millis },
  rate_limited: { retryAfter: { type: 'integer', description: 'seconds (also in Retry-After)' } },
  quota_exceeded: { retryAfter: { type: 'integer', description: 'seconds (also in Retry-After)' } },
};

/** Every 429 says when to come back. */
const RETRY_AFTER: ResponseObject['headers'] = { 'retry-after': { type: 'integer', description: 'seconds to wait before retrying' } };

/** The mpp rail's 402s carry its challenge. */
const PAYMENT_CHALLENGE: ResponseObject['headers'] = { 'www-authenticate': { type: 'string', description: 'mpp: `Payment id=…, realm=…, method="evm", intent="charge", request=…` to answer with `Authorization: Payment <credential>`' } };

/** The response of `status` on a route whose refusals at that status are `codes`. */
export function errorResponse(status: number, codes: readonly ErrorCode[]): ResponseObject {
  const details: Record<string, Schema> = Object.assign({}, ...codes.map((code) => DETAILS[code] ?? {}));
  return {
    description: `${STATUS_CODES[status]}: ${codes.map((code) => `\`${code}\``).join(', ')}`,
    ...(status === 429 ? { headers: RETRY_AFTER } : {}),
    ...(status === 402 ? { headers: PAYMENT_CHALLENGE } : {}),
    content: {
      'application/json': {
        schema: { allOf: [component('Error')], properties: { error: { enum: [...codes] }, ...details } },
      },
    },
  };
}
