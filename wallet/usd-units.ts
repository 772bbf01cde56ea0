/** Wallet amounts are micro-USD: the base unit of a 6-decimal USD stablecoin (1 token = 1 USD). */
export const MICRO_USD_DECIMALS = 6;

/** Base units of a USD token with `decimals` as micro-USD; undefined when they are not a whole number of them. */
export function microUsdOf(units: bigint, decimals: number): bigint | undefined {
  if (decimals === MICRO_USD_DECIMALS) return units;
  if (decimals > MICRO_USD_DECIMALS) {
    const scale = 10n ** BigInt(decimals - MICRO_USD_DECIMALS);
    return units % scale === 0n ? units / scale : undefined;
  }
  return units * 10n ** BigInt(MICRO_USD_DECIMALS - decimals);
}

/** The most base units of a USD token with `decimals` that `micro` micro-USD cover. */
export function unitsOf(micro: bigint, decimals: number): bigint {
  if (decimals >= MICRO_USD_DECIMALS) return micro * 10n ** BigInt(decimals - MICRO_USD_DECIMALS);
  return micro / 10n ** BigInt(MICRO_USD_DECIMALS - decimals);
}
