/** Every error the service answers with: a stable code, its HTTP status, and words for people. */
export const ERROR_STATUS = {
  invalid_request: 400,
  evaluator_policy_is_server_owned: 400,
  rail_not_available: 400,
  hash_mismatch: 400,
  unknown_blob: 400,
  invalid_signature: 401,
  wrong_code: 401,
  payment_required: 402,
  payment_failed: 402,
  forbidden: 403,
  access_required: 403,
  not_found: 404,
  stateNonce_mismatch: 409,
  already_funded: 409,
  funding_rounds_exhausted: 409,
  already_cosigned: 409,
  invalid_state: 409,
  inputHash_mismatch: 409,
  blob_limit_reached: 409,
  address_already_bound: 409,
  offer_not_acceptable: 409,
  sold_out: 409,
  link_expired: 410,
  offer_expired: 410,
  too_large: 413,
  unsupported_media_type: 415,
  deadline_passed: 422,
  too_early: 422,
  stale_issuedAt: 422,
  expiresAt_after_deadline: 422,
  expiresAt_out_of_range: 422,
  invalid_event: 422,
  rate_limited: 429,
  quota_exceeded: 429,
  internal_error: 500,
  unavailable: 503,
  rail_not_ready: 503,
  mail_unavailable: 503,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

export interface PactError {
  error: ErrorCode;
  message: string;
  [detail: string]: unknown;
}

export function pactError(error: ErrorCode, message: string, details: Record<string, unknown> = {}): PactError {
  return { error, message, ...details };
}

export function statusOf(error: PactError): number {
  return ERROR_STATUS[error.error];
}
