/** A party's hold on the credit rail: what it paid into the pact, held on its wallet. */
export interface Source {
  party: string;
  reservationId: string;
  amount: bigint;
}

/** One payout of a transition. */
export interface Owed {
  key: string;
  party: string;
  amount: bigint;
}

/** What a source pays: to each other party (`credits`); what it pays its own party stays with it. */
export interface SourcePlan {
  source: Source;
  credits: Map<string, bigint>;
}

export interface PayoutPlan {
  sources: SourcePlan[];
  /** The reservations each payout (by key) is paid from. */
  paidFrom: Map<string, string[]>;
}

/**
 * How a transition's payouts are paid out of the holds: each payee is paid from its own hold first (that money
 * never moves), payouts in the order given, then from the others' holds in order. The holds and the payouts must add up to the same: the pact
 * pays out exactly what was paid in.
 */
export function planPayouts(sources: Source[], payouts: Owed[]): PayoutPlan {
  const total = (amounts: bigint[]) => amounts.reduce((sum, amount) => sum + amount, 0n);
  const held = total(sources.map((s) => s.amount));
  const owed = total(payouts.map((p) => p.amount));
  if (held !== owed) throw new Error(`the holds add up to ${held} but the payouts to ${owed}`);
  const left = new Map(sources.map((s) => [s, s.amount]));
  const need = new Map(payouts.map((p) => [p, p.amount]));
  const plans = new Map(sources.map((s) => [s, { source: s, credits: new Map<string, bigint>() }]));
  const paidFrom = new Map(payouts.map((p) => [p.key, [] as string[]]));

  const draw = (payout: Owed, source: Source) => {
    const amount = [left.get(source)!, need.get(payout)!].reduce((a, b) => (a < b ? a : b));
    if (amount === 0n) return;
    left.set(source, left.get(source)! - amount);
    need.set(payout, need.get(payout)! - amount);
    paidFrom.get(payout.key)!.push(source.reservationId);
    if (source.party === payout.party) return;
    const credits = plans.get(source)!.credits;
    credits.set(payout.party, (credits.get(payout.party) ?? 0n) + amount);
  };
  for (const payout of payouts) for (const source of sources) if (source.party === payout.party) draw(payout, source);
  for (const payout of payouts) for (const source of sources) draw(payout, source);
  return { sources: [...plans.values()], paidFrom };
}
