import { ERROR_STATUS, type ErrorCode } from '../protocol/errors.js';
import { errorResponse, SUCCESS, type ResponseObject, type Success } from './response-schemas.js';

// What each route answers: its success and every error code it can refuse with, read from its handler and
// what the handler calls (actors/admission.ts, machines/*/decide.ts and rules.ts, the desks, the access
// gate). GET /openapi.json lists them. Not listed, as any route may answer them: 500 `internal_error`, and
// 404 `not_found` for a URL that names no route.

/** A POST body the JSON parser reads: not JSON, not UTF-8 or not `application/json` (400); over 256 KiB (413). */
const JSON_BODY: ErrorCode[] = ['invalid_request', 'too_large'];
/** A route under a per-client limit (PACT_RATE_LIMIT_*, or the server's own caps): 429 with Retry-After. */
const RATE_LIMITED: ErrorCode[] = ['rate_limited'];
/** A signed write: limited, a JSON body of the route's schema (400), signed for this route and key (401). */
const SIGNED_WRITE: ErrorCode[] = [...RATE_LIMITED, ...JSON_BODY, 'invalid_signature'];
/** A call no pact nonce protects: `issuedAt` within 10 minutes of the wall clock (422). */
const FRESH: ErrorCode[] = ['stale_issuedAt', 'too_early'];
/** A write whose signer the access gate judges: not allowed on an invite-mode server (403); access unreadable (503). */
const GATED: ErrorCode[] = ['access_required', 'unavailable'];
/** A command to an existing pact's actor: no such pact (404), no answer from its host (503). */
const ON_PACT: ErrorCode[] = ['not_found', 'unavailable'];
/** A signed pact call on the pact's nonce (machines/pact/decide.ts): who (403), nonce (409), state (409), deadline (422). */
const PACT_CALL: ErrorCode[] = [...SIGNED_WRITE, ...ON_PACT, 'forbidden', 'stateNonce_mismatch', 'invalid_state', 'deadline_passed'];
/** cosign and object: refused alike (decide.ts, refuseResponse). */
const RESPONSE_TO_PROPOSAL: ErrorCode[] = [...PACT_CALL, ...GATED, 'already_cosigned'];
/** The access routes: signed, fresh, and the access journal, which may be unreadable (503). */
const ACCESS_CALL: ErrorCode[] = [...SIGNED_WRITE, ...FRESH, 'unavailable'];
const READ_PAGE: ErrorCode[] = [...RATE_LIMITED, 'invalid_request'];

interface RouteAnswers {
  success: Success;
  refusals: ErrorCode[];
}

/** Keyed by method and path as the routes are registered (`:param`). */
export const ROUTE_ANSWERS: Record<string, RouteAnswers> = {
  'POST /pacts': { success: 'pact', refusals: [...SIGNED_WRITE, ...GATED, ...FRESH, 'evaluator_policy_is_server_owned', 'rail_not_available', 'rail_not_ready'] },
  'GET /pacts': { success: 'pactPage', refusals: READ_PAGE },
  'GET /pacts/:id': { success: 'pact', refusals: ['not_found'] },
  'POST /pacts/:id/fund': {
    success: 'fundedPact',
    refusals: [...PACT_CALL, ...GATED, 'already_funded', 'funding_rounds_exhausted', 'payment_required', 'payment_failed', 'rail_not_ready'],
  },
  'POST /pacts/:id/withdraw': { success: 'pact', refusals: PACT_CALL },
  'POST /pacts/:id/propose': { success: 'pact', refusals: [...PACT_CALL, ...GATED, 'unknown_blob'] },
  'POST /pacts/:id/cosign': { success: 'pact', refusals: RESPONSE_TO_PROPOSAL },
  'POST /pacts/:id/object': { success: 'pact', refusals: RESPONSE_TO_PROPOSAL },
  'POST /pacts/:id/cancel': { success: 'pact', refusals: [...PACT_CALL, 'expiresAt_after_deadline'] },
  'POST /pacts/:id/verdict': { success: 'pact', refusals: [...SIGNED_WRITE, ...ON_PACT, 'invalid_state', 'inputHash_mismatch', 'deadline_passed'] },
  'POST /pacts/:id/poke': { success: 'pact', refusals: [...RATE_LIMITED, ...JSON_BODY, ...ON_PACT] },
  // Raw bytes, not JSON: its own content type (415) and size (413); the upload room may be full (429) or the disk (503).
  'POST /pacts/:id/blobs': {
    success: 'blobHash',
    refusals: [...RATE_LIMITED, 'invalid_request', 'unsupported_media_type', 'too_large', 'not_found', 'invalid_signature', ...GATED, 'forbidden', 'invalid_state', ...FRESH, 'hash_mismatch', 'blob_limit_reached'],
  },
  'POST /pacts/:id/blobs/:hash/link': { success: 'blobLink', refusals: [...SIGNED_WRITE, 'not_found', 'forbidden', ...FRESH] },
  'GET /dl/:token': { success: 'blobBytes', refusals: ['not_found', 'link_expired'] },
  'POST /offers': {
    success: 'offer',
    refusals: [...SIGNED_WRITE, ...GATED, 'evaluator_policy_is_server_owned', 'expiresAt_out_of_range', 'rail_not_available', 'not_found', 'forbidden', 'invalid_state'],
  },
  'GET /offers': { success: 'offerPage', refusals: READ_PAGE },
  'GET /offers/watch': { success: 'offerPage', refusals: READ_PAGE },
  'POST /offers/:id/accept': {
    success: 'pact',
    refusals: [...SIGNED_WRITE, ...GATED, ...FRESH, 'not_found', 'offer_not_acceptable', 'forbidden', 'offer_expired', 'sold_out', 'rail_not_available'],
  },
  'POST /v0/events': { success: 'eventAccepted', refusals: [...RATE_LIMITED, ...JSON_BODY, 'invalid_event', 'invalid_signature', ...GATED, 'quota_exceeded'] },
  'POST /v0/pull': { success: 'pullPage', refusals: [...RATE_LIMITED, ...JSON_BODY] },
  'POST /access/request': { success: 'accessRequested', refusals: [...ACCESS_CALL, 'mail_unavailable'] },
  'POST /access/verify': { success: 'accessVerified', refusals: [...ACCESS_CALL, 'wrong_code'] },
  'GET /access/:party': { success: 'accessStatus', refusals: ['invalid_request', 'unavailable'] },
  'POST /access/admin': { success: 'accessAdmin', refusals: [...ACCESS_CALL, 'forbidden', 'invalid_state'] },
  'GET /health': { success: 'health', refusals: [] },
  'GET /': { success: 'landingPage', refusals: [] },
  'GET /agents.md': { success: 'agentsMd', refusals: [] },
  'GET /llms.txt': { success: 'llmsTxt', refusals: [] },
  'GET /install': { success: 'installer', refusals: [] },
  // Built on first request; a build that fails is 503 (and tried again on the next).
  'GET /pact-cli.tgz': { success: 'cliPackage', refusals: ['unavailable'] },
  'GET /openapi.json': { success: 'openApiDocument', refusals: [] },
  // On the credit rail the wallet's bearer proves control (403 without it; 503 when the wallet service cannot say).
  'POST /rails/:rail/address': { success: 'railAddress', refusals: [...SIGNED_WRITE, ...FRESH, ...GATED, 'rail_not_available', 'address_already_bound', 'forbidden'] },
  'GET /machines': { success: 'machinesPage', refusals: [] },
  'GET /machines/machines.css': { success: 'stylesheet', refusals: [] },
  'GET /machines/live.js': { success: 'script', refusals: [] },
  'GET /machines/pacts/:id': { success: 'livePactPage', refusals: ['not_found'] },
  'GET /machines/pacts/:id/journal': { success: 'journalEvents', refusals: ['not_found', 'invalid_request', 'rate_limited'] },
};

/** The OpenAPI responses of `route` (`METHOD /path`): 200, and each error status with its codes; undefined for a route not listed. */
export function responsesOf(route: string): Record<number, ResponseObject> | undefined {
  const answers = ROUTE_ANSWERS[route];
  if (!answers) return undefined;
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of new Set(answers.refusals)) byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  return Object.fromEntries([
    [200, SUCCESS[answers.success]],
    ...[...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => [status, errorResponse(status, codes)]),
  ]);
}
