import type { Pact, PactState } from '../machines/pact/types.js';

/** The provider DECISIONS.md names: from the pact journal, settled pacts per party. */
export const REPUTATION_PROVIDER = 'pact.settlement.v1';

/** A party's record of terminal pacts: how many, and how many SETTLED without it forfeiting a bond. */
export interface Standing {
  terminal: number;
  good: number;
}

const TERMINAL: readonly PactState[] = ['SETTLED', 'CANCELLED'];
export const isTerminal = (state: PactState) => TERMINAL.includes(state);

/** Whether `party` comes out of the terminal `pact` well: it SETTLED and the party forfeited no bond. */
export const settledWell = (pact: Pact, party: string) =>
  pact.state === 'SETTLED' && !(pact.settlement?.bondForfeits ?? []).some((f) => f.party === party && BigInt(f.amount) > 0n);

/** `pact.settlement.v1`: the fraction of a party's terminal pacts that settled well; 0 with no history. */
export const reputationOf = (standing: Standing | undefined) => (standing && standing.terminal > 0 ? standing.good / standing.terminal : 0);
