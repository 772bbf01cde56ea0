/** Money on the wire: a minor-unit integer string and an asset code. Never a float; BigInt to compute. */
export interface Money {
  amount: string;
  asset: string;
}

/** A minor-unit amount: a non-negative integer without sign, decimals or leading zeros, at most 30 digits. */
export const AMOUNT_PATTERN = '^(0|[1-9][0-9]{0,29})$';
