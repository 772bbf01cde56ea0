/** Money on the wire: a minor-unit integer string and an asset code. Never a float. */
export interface Money {
  amount: string;
  asset: string;
}

export const AMOUNT_PATTERN = '^(0|[1-9][0-9]{0,29})$';
const AMOUNT = new RegExp(AMOUNT_PATTERN);

export function isAmount(value: unknown): value is string {
  return typeof value === 'string' && AMOUNT.test(value);
}

export function toMinor(amount: string): bigint {
  if (!isAmount(amount)) throw new Error(`not a minor-unit amount: ${amount}`);
  return BigInt(amount);
}

export function sumMinor(amounts: Iterable<string>): bigint {
  let total = 0n;
  for (const amount of amounts) total += toMinor(amount);
  return total;
}
