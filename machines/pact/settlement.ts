import type { PartyId } from '../../protocol/party.js';
import type { Outcome, Pact, PactParty, Payout, PayoutKind, Settlement, Share } from './types.js';

const BP_TOTAL = 10_000n;

export function potOf(pact: Pact): bigint {
  return pact.parties.reduce((pot, p) => pot + BigInt(p.paidPot), 0n);
}

/**
 * Splits `pot` by basis points: floor(pot × bp / 10000) each, then the leftover minor units one by one
 * to the largest remainders, ties broken by distribution order.
 */
export function splitPot(pot: bigint, shares: Share[]): { party: PartyId; amount: string }[] {
  const exact = shares.map((s, index) => {
    const scaled = pot * BigInt(s.bp);
    return { party: s.party, index, amount: scaled / BP_TOTAL, remainder: scaled % BP_TOTAL };
  });
  let leftover = pot - exact.reduce((sum, e) => sum + e.amount, 0n);
  const byRemainder = [...exact].sort((a, b) =>
    a.remainder === b.remainder ? a.index - b.index : a.remainder > b.remainder ? -1 : 1,
  );
  for (const entry of byRemainder) {
    if (leftover === 0n) break;
    entry.amount += 1n;
    leftover -= 1n;
  }
  return exact.map((e) => ({ party: e.party, amount: e.amount.toString() }));
}

export type Transfers = Omit<Settlement, 'outcome'>;

/** Deposit and bond back to each of `parties`. */
export function refundsOf(parties: PactParty[]): Transfers {
  const funded = parties.filter((p) => p.confirmed);
  return {
    pot: [],
    depositRefunds: funded.map((p) => ({ party: p.party, amount: p.paidPot })),
    bondReturns: funded.map((p) => ({ party: p.party, amount: p.paidBond })),
    bondForfeits: [],
  };
}

/** Everyone funded gets deposit and bond back. */
export function refundSettlement(pact: Pact, outcome: Outcome): Settlement {
  return { outcome, ...refundsOf(pact.parties) };
}

/** The pot goes by `shares`; each party in `forfeits` loses that much of its bond, the rest is returned. */
export function distributionSettlement(
  pact: Pact,
  outcome: Outcome,
  shares: Share[],
  forfeits: Map<PartyId, bigint> = new Map(),
): Settlement {
  const funded = pact.parties.filter((p) => p.confirmed);
  const forfeitOf = (p: PactParty) => forfeits.get(p.party) ?? 0n;
  return {
    outcome,
    pot: splitPot(potOf(pact), shares),
    depositRefunds: [],
    bondReturns: funded.map((p) => ({ party: p.party, amount: (BigInt(p.paidBond) - forfeitOf(p)).toString() })),
    bondForfeits: funded
      .filter((p) => forfeitOf(p) > 0n)
      .map((p) => ({ party: p.party, amount: forfeitOf(p).toString() })),
  };
}

/** The arbitration fee is the losing side's whole bond; `split` takes half (floor) of each side's. */
export function verdictForfeits(pact: Pact, feeFrom: 'proposer' | 'objector' | 'split'): Map<PartyId, bigint> {
  const bondOf = (party: PartyId | undefined) =>
    BigInt(pact.parties.find((p) => p.party === party)?.paidBond ?? '0');
  const proposer = pact.proposer;
  const objector = pact.objection?.by;
  const forfeits = new Map<PartyId, bigint>();
  if (feeFrom === 'objector' && objector) forfeits.set(objector, bondOf(objector));
  if (feeFrom === 'proposer') forfeits.set(proposer, bondOf(proposer));
  if (feeFrom === 'split') {
    forfeits.set(proposer, bondOf(proposer) / 2n);
    if (objector) forfeits.set(objector, bondOf(objector) / 2n);
  }
  return forfeits;
}

/** One payout per party and kind, zero amounts left out; keys are `<pactId>:<transition>:<kind>:<party>`. */
export function payoutsOf(pact: Pact, transition: string, settlement: Transfers): Payout[] {
  const lines: { party: PartyId; kind: PayoutKind; amount: bigint }[] = [
    ...settlement.pot.map((l) => ({ party: l.party, kind: 'pot' as const, amount: BigInt(l.amount) })),
    ...settlement.depositRefunds.map((l) => ({ party: l.party, kind: 'deposit' as const, amount: BigInt(l.amount) })),
    ...settlement.bondReturns.map((l) => ({ party: l.party, kind: 'bond' as const, amount: BigInt(l.amount) })),
  ];
  const fee = settlement.bondForfeits.reduce((sum, l) => sum + BigInt(l.amount), 0n);
  if (fee > 0n) lines.push({ party: pact.arbitrationFeeRecipient, kind: 'fee', amount: fee });
  return lines
    .filter((l) => l.amount > 0n)
    .map((l) => ({
      party: l.party,
      kind: l.kind,
      amount: l.amount.toString(),
      key: `${pact.id}:${transition}:${l.kind}:${l.party}`,
      transition,
      status: 'pending' as const,
      railRef: null,
    }));
}
