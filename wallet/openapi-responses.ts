import { STATUS_CODES } from 'node:http';
import type { OpenAPIV3_1 } from 'openapi-types';
import { json, object, type ResponseObject, type Schema } from '../gateway/response-schemas.js';
import { WALLET_STATUSES } from '../machines/wallet/types.js';
import { WALLET_ERROR_STATUS, type WalletErrorCode } from './errors.js';

// What the wallet routes answer, for GET /openapi.json only (added to the document by the swagger transform, never
// to the routes: a response schema would make Fastify drop every field it does not name).

type ComponentName = 'WalletError' | 'Usd' | 'Wallet' | 'Pairing' | 'Checkout' | 'Reservation' | 'LedgerEntry' | 'Capability' | 'RegistryItem' | 'Execution' | 'Receipt';
const component = (name: ComponentName): Schema => ({ $ref: `#/components/schemas/${name}` });
const time: Schema = { type: 'string', format: 'date-time' };
const nullableTime: Schema = { type: ['string', 'null'], format: 'date-time' };
const usd = component('Usd');

/** The shared schemas: `#/components/schemas/<name>`. Each names the fields always present. */
export const WALLET_COMPONENTS: Record<ComponentName, OpenAPIV3_1.SchemaObject> = {
  WalletError: {
    ...object(['error', 'message'], { error: { type: 'string' }, message: { type: 'string' } }),
    description: 'Every refusal: `{ error, message, ...details }`.',
  },
  Usd: object(['amount', 'asset'], { amount: { type: 'string', description: 'micro-USD, an integer string (a leading `-` on ledger debits)' }, asset: { const: 'USD' } }),
  Wallet: object(['id', 'status', 'label', 'balance', 'held', 'available', 'createdAt', 'updatedAt'], {
    id: { type: 'string', pattern: '^w_' },
    status: { enum: [...WALLET_STATUSES] },
    label: { type: ['string', 'null'] },
    balance: usd,
    held: usd,
    available: { ...usd, description: 'balance − held' },
    createdAt: time,
    updatedAt: time,
  }),
  Pairing: object(['id', 'token', 'code', 'expiresAt', 'claimUrl'], {
    token: { type: 'string', description: 'shown once: claim it with POST /v1/pairings/claim' },
    code: { type: 'string', description: '`XXXX-XXXX`, for a person to type' },
    expiresAt: time,
    claimUrl: { type: 'string' },
  }),
  Checkout: object(['id', 'walletId', 'url', 'amount', 'status', 'expiresAt'], {
    url: { type: 'string', description: 'the hosted checkout page' },
    amount: usd,
    status: { enum: ['open', 'completed', 'expired'] },
    expiresAt: time,
  }),
  Reservation: object(['id', 'walletId', 'status', 'amount', 'settled', 'released', 'activity', 'wallet', 'createdAt', 'expiresAt', 'finalizedAt', 'ledgerTxIds'], {
    id: { type: 'string', pattern: '^rsv_' },
    status: { enum: ['held', 'settled', 'released', 'expired'] },
    amount: usd,
    settled: usd,
    released: usd,
    activity: object(['kind', 'pactId', 'party', 'role', 'state'], { kind: { const: 'pact' }, state: { enum: ['SETTLED', 'CANCELLED', null] } }),
    wallet: object(['balance', 'held', 'available', 'status'], { balance: usd, held: usd, available: usd }),
    createdAt: time,
    expiresAt: time,
    finalizedAt: nullableTime,
    ledgerTxIds: { type: 'array', items: { type: 'string' } },
  }),
  Capability: object(['id', 'name', 'description', 'category', 'tags', 'inputSchema', 'outputSchema', 'pricing', 'providers', 'status'], {
    id: { type: 'string', description: 'a dotted slug, e.g. web.extract' },
    pricing: object(['mode', 'price', 'maxPrice'], { mode: { enum: ['fixed', 'dynamic'] }, price: usd, maxPrice: usd }),
    providers: { type: 'array', items: object(['registryId', 'rail', 'resource', 'method', 'price', 'status'], { registryId: { type: ['string', 'null'], description: 'null: a plain HTTP provider the catalog prices' }, rail: { enum: ['http', 'x402', 'mpp', 'mock'] }, price: usd, status: { enum: ['active', 'unreachable'] } }) },
    status: { enum: ['active', 'unavailable'] },
  }),
  RegistryItem: object(['id', 'rail', 'source', 'serviceName', 'provider', 'resource', 'method', 'description', 'tags', 'categories', 'payment', 'price', 'input', 'quality', 'status', 'firstSeenAt', 'lastSeenAt', 'lastCheckedAt'], {
    id: { type: 'string', pattern: '^rg_' },
    rail: { enum: ['x402', 'mpp'] },
    payment: object(['network', 'asset', 'decimals', 'amount', 'payTo'], { amount: { type: 'string', description: "base units of the provider's token" } }),
    price: { ...usd, description: 'one call, in micro-USD' },
    quality: object(['calls30d', 'uniquePayers30d', 'lastCalledAt'], {}),
    status: { enum: ['active', 'unreachable'] },
    firstSeenAt: time,
    lastSeenAt: time,
    lastCheckedAt: nullableTime,
  }),
  Execution: object(['id', 'capabilityId', 'rail', 'provider', 'status', 'quoted', 'reserved', 'charged', 'released', 'inputHash', 'outputHash', 'createdAt', 'finishedAt'], {
    id: { type: 'string', pattern: '^ex_' },
    rail: { enum: ['http', 'x402', 'mpp', 'mock'] },
    status: { enum: ['pending', 'paying', 'succeeded', 'failed', 'ambiguous', 'unanswered'] },
    quoted: usd,
    reserved: usd,
    charged: usd,
    released: usd,
    createdAt: time,
    finishedAt: nullableTime,
  }),
  Receipt: object(['id', 'executionId', 'walletId', 'rail', 'provider', 'quoted', 'reserved', 'charged', 'released', 'providerPayment', 'inputHash', 'outputHash', 'ledgerTxIds', 'issuedAt'], {
    id: { type: 'string', pattern: '^rc_' },
    provider: object(['registryId', 'resource', 'method'], {}),
    quoted: usd,
    reserved: usd,
    charged: usd,
    released: usd,
    inputHash: { type: 'string', description: 'SHA-256 hex of the JCS of the input' },
    outputHash: { type: ['string', 'null'], description: 'SHA-256 hex of the JCS of the output' },
    issuedAt: time,
  }),
  LedgerEntry: object(['id', 'type', 'amount', 'balanceAfter', 'availableAfter', 'reference', 'transactionId', 'createdAt'], {
    type: { enum: ['topup', 'hold', 'hold_release', 'debit', 'credit', 'refund', 'adjustment'] },
    amount: usd,
    balanceAfter: usd,
    availableAfter: usd,
    reference: object(['kind', 'id'], {}),
    createdAt: time,
  }),
};

const reservation = json('`{ reservation }`', object(['reservation'], { reservation: component('Reservation') }));

/** Each documented route: its success (status and body) and the codes it may refuse with. */
const WALLET_ROUTES: Record<string, { status: number; success: ResponseObject; replay?: ResponseObject; refusals: WalletErrorCode[] }> = {
  'GET /v1/catalog': {
    status: 200,
    success: json('`{ version, updatedAt, capabilities }`', object(['version', 'updatedAt', 'capabilities'], { capabilities: { type: 'array', items: component('Capability') } })),
    refusals: ['invalid_request'],
  },
  'GET /v1/registry': {
    status: 200,
    success: json('`{ items, nextCursor }`: one item per (service, endpoint)', object(['items', 'nextCursor'], { items: { type: 'array', items: component('RegistryItem') }, nextCursor: { type: ['string', 'null'] } })),
    refusals: ['invalid_request'],
  },
  'POST /v1/discover': {
    status: 200,
    success: json(
      '`{ task, results, rankedAt }`: best first',
      object(['task', 'results', 'rankedAt'], {
        results: {
          type: 'array',
          items: object(['rank', 'score', 'capabilityId', 'registryId', 'name', 'rail', 'price', 'executable', 'blockingRequirements', 'reasons', 'signals'], {
            price: usd,
            executable: { type: 'boolean' },
            blockingRequirements: { type: 'array', items: { type: 'string' } },
            reasons: { type: 'array', items: { type: 'string' } },
            signals: object(['relevance', 'quality', 'price', 'freshness'], {}),
          }),
        },
        rankedAt: time,
      }),
    ),
    refusals: ['invalid_request'],
  },
  'POST /v1/executions': {
    status: 200,
    success: json('`{ execution, result, receipt, wallet }`: the provider\'s answer, and what it cost', object(['execution', 'result', 'receipt'], { execution: component('Execution'), result: {}, receipt: component('Receipt') })),
    refusals: ['invalid_request', 'unauthorized', 'not_found', 'topup_required', 'wallet_suspended', 'idempotency_in_progress', 'idempotency_key_reused', 'price_above_max', 'provider_failed', 'unavailable'],
  },
  'GET /v1/executions/:id': {
    status: 200,
    success: json('`{ execution, receipt }`', object(['execution', 'receipt'], { execution: component('Execution'), receipt: component('Receipt') })),
    refusals: ['unauthorized', 'not_found'],
  },
  'POST /v1/wallets': {
    status: 201,
    success: json('`{ wallet, pairing }`: a new wallet, waiting to be paired', object(['wallet', 'pairing'], { wallet: component('Wallet'), pairing: component('Pairing') })),
    refusals: ['invalid_request', 'idempotency_in_progress', 'idempotency_key_reused', 'rate_limited'],
  },
  'POST /v1/pairings/claim': {
    status: 200,
    success: json('`{ wallet, accessToken, tokenType }`: the access token, shown once', object(['wallet', 'accessToken', 'tokenType'], { wallet: component('Wallet'), accessToken: { type: 'string', pattern: '^wk_' }, tokenType: { const: 'Bearer' } })),
    refusals: ['invalid_request', 'not_found', 'pairing_used', 'pairing_expired', 'rate_limited'],
  },
  'GET /v1/wallets/:id': { status: 200, success: json('`{ wallet }`', object(['wallet'], { wallet: component('Wallet') })), refusals: ['unauthorized', 'forbidden'] },
  'GET /v1/me': {
    status: 200,
    success: json(
      '`{ wallet, funding, usage, ledger }`: the ledger newest first, paged by `cursor`',
      object(['wallet', 'funding', 'usage', 'ledger'], {
        wallet: component('Wallet'),
        funding: object(['totalFunded', 'lastFundedAt', 'checkouts'], { totalFunded: usd, lastFundedAt: nullableTime, checkouts: { type: 'array', items: component('Checkout') } }),
        usage: object(['totalSpent', 'executions', 'openReservations'], { totalSpent: usd, executions: { type: 'integer' }, openReservations: { type: 'integer' } }),
        ledger: object(['items', 'nextCursor'], { items: { type: 'array', items: component('LedgerEntry') }, nextCursor: { type: ['string', 'null'] } }),
      }),
    ),
    refusals: ['invalid_request', 'unauthorized'],
  },
  'POST /v1/checkout': {
    status: 201,
    success: json('`{ checkout }`: open until `expiresAt`; pay it at `url`', object(['checkout'], { checkout: component('Checkout') })),
    refusals: ['invalid_request', 'unauthorized', 'wallet_suspended', 'idempotency_in_progress', 'idempotency_key_reused'],
  },
  'GET /checkout/:id': {
    status: 200,
    success: { description: 'The hosted checkout page: the amount, and a form that pays it', content: { 'text/html': { schema: { type: 'string' } } } },
    refusals: ['not_found'],
  },
  'POST /checkout/:id/pay': {
    status: 200,
    success: json(
      '`{ checkout }`, completed (a program; the page\'s form gets pages, or a 303 to `successUrl`). With the rail\'s receipt header: `X-PAYMENT-RESPONSE` (x402), `Payment-Receipt` (mpp)',
      object(['checkout'], { checkout: component('Checkout') }),
    ),
    refusals: ['invalid_request', 'not_found', 'payment_required', 'payment_failed', 'checkout_expired', 'unavailable'],
  },
  'POST /v1/internal/agent-pact/reservations': {
    status: 201,
    success: { ...reservation, description: '`{ reservation }`, held' },
    replay: { ...reservation, description: '`{ reservation }`: the same request again (its Idempotency-Key, else its pact and party), answered with the reservation as it now is' },
    refusals: ['invalid_request', 'unauthorized', 'insufficient_credit', 'forbidden', 'wallet_suspended', 'not_found', 'idempotency_key_reused', 'unavailable'],
  },
  'GET /v1/internal/agent-pact/reservations/:id': { status: 200, success: reservation, refusals: ['unauthorized', 'not_found', 'unavailable'] },
  'POST /v1/internal/agent-pact/reservations/:id/settle': {
    status: 200,
    success: reservation,
    refusals: ['invalid_request', 'unauthorized', 'not_found', 'reservation_not_held', 'unavailable'],
  },
  'POST /v1/internal/agent-pact/reservations/:id/release': { status: 200, success: reservation, refusals: ['invalid_request', 'unauthorized', 'not_found', 'reservation_not_held', 'unavailable'] },
};

/** The OpenAPI responses of `route` (`METHOD /path`); undefined for a route not documented. */
export function walletResponsesOf(route: string): Record<number, ResponseObject> | undefined {
  const answers = WALLET_ROUTES[route];
  if (!answers) return undefined;
  const byStatus = new Map<number, WalletErrorCode[]>();
  for (const code of answers.refusals) byStatus.set(WALLET_ERROR_STATUS[code], [...(byStatus.get(WALLET_ERROR_STATUS[code]) ?? []), code]);
  const refusals = [...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [status, refusal(status, codes)] as const);
  return Object.fromEntries([[answers.status, answers.success], ...(answers.replay ? [[200, answers.replay]] : []), ...refusals]);
}

/** Details some refusals carry beside `error` and `message`. */
const DETAILS: Partial<Record<WalletErrorCode, Record<string, Schema>>> = {
  payment_required: { requirement: { type: 'object', description: "the rail's requirement (as the escrow's fund flow gives it); mpp adds `WWW-Authenticate: Payment`" } },
  payment_failed: { reason: { type: 'string' }, requirement: { type: 'object' } },
  insufficient_credit: { requested: usd, available: usd },
  reservation_not_held: { reservation: component('Reservation') },
  topup_required: { required: usd, available: usd, shortfall: usd, topUp: object(['method', 'path'], {}) },
  price_above_max: { price: usd, maxPrice: usd },
  provider_failed: { execution: component('Execution'), receipt: component('Receipt') },
};

function refusal(status: number, codes: WalletErrorCode[]): ResponseObject {
  const details = Object.assign({}, ...codes.map((code) => DETAILS[code] ?? {}));
  return json(`${STATUS_CODES[status]}: ${codes.map((code) => `\`${code}\``).join(', ')}`, { allOf: [component('WalletError')], properties: { error: { enum: codes }, ...details } });
}
