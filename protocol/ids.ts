/** A pact id: `p_` and 32 lowercase hex characters (the first 16 bytes of its create call's digest). */
export const PACT_ID = /^p_[0-9a-f]{32}$/;

/** An offer id: `o_` and 32 lowercase hex characters (the first 16 bytes of the signed offer's digest). */
export const OFFER_ID = /^o_[0-9a-f]{32}$/;

/** A blob hash: lowercase hex SHA-256. */
export const SHA256_HEX = /^[0-9a-f]{64}$/;
