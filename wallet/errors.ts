/** Every error the wallet service answers with (WALLET-DECISIONS.md): a stable code and its HTTP status. */
export const WALLET_ERROR_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  wallet_suspended: 403,
  not_found: 404,
  topup_required: 402,
  insufficient_credit: 402,
  /** A checkout paid on a real rail (x402): the requirement to pay, as the escrow's fund flow gives it. */
  payment_required: 402,
  payment_failed: 402,
  pairing_used: 409,
  reservation_not_held: 409,
  idempotency_in_progress: 409,
  pairing_expired: 410,
  /** A checkout paid after its 30 minutes (WALLET-DECISIONS.md names no code for it). */
  checkout_expired: 410,
  idempotency_key_reused: 422,
  price_above_max: 422,
  rate_limited: 429,
  internal_error: 500,
  provider_failed: 502,
  unavailable: 503,
} as const;

export type WalletErrorCode = keyof typeof WALLET_ERROR_STATUS;

export interface WalletError {
  error: WalletErrorCode;
  message: string;
  [detail: string]: unknown;
}

export const walletError = (error: WalletErrorCode, message: string, details: Record<string, unknown> = {}): WalletError => ({ error, message, ...details });

export const statusOfWalletError = (error: WalletError): number => WALLET_ERROR_STATUS[error.error];
