import { newPact, type PactSpec, type ServerPolicy } from '../../machines/pact/spec.js';
import { evolve } from '../../machines/pact/evolve.js';
import type { PactEvent } from '../../machines/pact/events.js';
import type { PactCommand } from '../../machines/pact/commands.js';
import type { EvidenceItem, FeeFrom, Pact, Share, VerdictBody } from '../../machines/pact/types.js';
import type { PartyId } from '../../protocol/party.js';
import { generateKeyPair, keyPairFromSeed, signPayload, type KeyPair } from '../../protocol/sign.js';

export const usdc = (amount: string | number) => ({ amount: String(amount), asset: 'USDC' });

export const evaluatorKey = generateKeyPair();
export const feeRecipient = generateKeyPair();

export const policy: ServerPolicy = {
  evaluator: { pubkey: evaluatorKey.party, promptVersion: 'v1', model: 'stub', timeoutMs: 86_400_000, onFailure: 'refund' },
  arbitrationFeeRecipient: feeRecipient.party,
};

/** Deposit and bond of each side of a two-party spec, in minor units. */
export interface TwoPartyAmounts {
  proposerBond: number;
  payerDeposit: number;
  payerBond: number;
}

/** A two-party spec: `a` proposes and puts nothing in the pot, `b` pays in; both post bonds. */
export function twoPartySpec(
  a: KeyPair,
  b: KeyPair,
  overrides: Partial<PactSpec> = {},
  amounts: TwoPartyAmounts = { proposerBond: 100, payerDeposit: 1000, payerBond: 100 },
): PactSpec {
  return {
    rail: 'mock',
    parties: [
      { party: a.party, deposit: usdc(0), bond: usdc(amounts.proposerBond), required: true },
      { party: b.party, deposit: usdc(amounts.payerDeposit), bond: usdc(amounts.payerBond), required: true },
    ],
    proposer: a.party,
    terms: { spec: 'deliver a summary' },
    minParties: 2,
    ...overrides,
  };
}

export function pactFrom(spec: PactSpec, at = 1_000_000): Pact {
  return newPact({ id: 'p_test', spec, createdBy: spec.parties[0]!.party, at, policy, escrowAccount: 'mock:escrow' });
}

// ---- Additions for the machine tests (tests/machines) ----

/** When `pactFrom` creates a pact by default. */
export const T0 = 1_000_000;
export const HOUR_MS = 3_600_000;

/** A deterministic key, so that replayed scenarios name the same parties on every run. */
export const partyKey = (n: number): KeyPair => keyPairFromSeed(new Uint8Array(32).fill(n));

/** Three required parties by default: `a` proposes with no deposit; `b` and `c` fill the pot (600 + 400). */
export function threePartySpec(a: KeyPair, b: KeyPair, c: KeyPair, overrides: Partial<PactSpec> = {}): PactSpec {
  return {
    rail: 'mock',
    parties: [
      { party: a.party, deposit: usdc(0), bond: usdc(50), required: true },
      { party: b.party, deposit: usdc(600), bond: usdc(70), required: true },
      { party: c.party, deposit: usdc(400), bond: usdc(30), required: true },
    ],
    proposer: a.party,
    terms: { spec: 'three-way delivery' },
    minParties: 3,
    ...overrides,
  };
}

/** A verdict on `pact` signed by `signer` (the pinned evaluator unless told otherwise). */
export function verdictBody(
  pact: Pact, issuedAt: number, distribution: Share[], feeFrom: FeeFrom, signer: KeyPair = evaluatorKey, inputHash = pact.inputHash ?? '',
): VerdictBody {
  const body = { pactId: pact.id, inputHash, distribution, feeFrom, issuedAt, signer: signer.party };
  return { ...body, sig: signPayload(body, signer) };
}

type Ev<T extends PactEvent['type']> = Extract<PactEvent, { type: T }>;

/** Builders of machine events with plausible defaults. */
export const ev = {
  fund: (party: PartyId, at: number, receipt = `rcpt:${party.slice(-6)}:${at}`): Ev<'fund'> => ({ type: 'fund', at, party, receipt }),
  withdraw: (party: PartyId, at: number): Ev<'withdraw'> => ({ type: 'withdraw', at, party }),
  propose: (party: PartyId, at: number, distribution: Share[], evidence: EvidenceItem[] = [{ note: 'done' }]): Ev<'propose'> => ({
    type: 'propose', at, party, proposal: { evidence, distribution },
  }),
  cosign: (party: PartyId, at: number): Ev<'cosign'> => ({ type: 'cosign', at, party }),
  object: (party: PartyId, at: number, reason = 'not delivered'): Ev<'object'> => ({ type: 'object', at, party, reason }),
  cancel: (party: PartyId, at: number, approvedBy: PartyId[], expiresAt: number): Ev<'cancel'> => ({
    type: 'cancel', at, party, approvedBy, expiresAt,
  }),
  verdict: (pact: Pact, at: number, distribution: Share[], feeFrom: FeeFrom, signer: KeyPair = evaluatorKey): Ev<'verdict'> => ({
    type: 'verdict', at, verdict: { ...verdictBody(pact, at, distribution, feeFrom, signer), at },
  }),
  poke: (at: number): Ev<'poke'> => ({ type: 'poke', at }),
  paid: (at: number, keys: string[], railRef = (key: string) => `tx:${key}`): Ev<'payoutsRecorded'> => ({
    type: 'payoutsRecorded', at, paid: keys.map((key) => ({ key, railRef: railRef(key) })),
  }),
};

/** Applies `events` in order; throws naming the first one the machine refuses. */
export function run(pact: Pact, ...events: PactEvent[]): Pact {
  return events.reduce((current, event, index) => {
    const next = evolve(current, event);
    if (!next) throw new Error(`event #${index} (${event.type} at ${event.at}) refused in ${current.state}`);
    return next;
  }, pact);
}

/** Every party of the pact funds, one millisecond apart, starting at `at`. */
export const fundAll = (pact: Pact, at = pact.createdAt + 1): Pact =>
  run(pact, ...pact.parties.map((p, i) => ev.fund(p.party, at + i)));

export const sumAmounts = (lines: { amount: string }[]): bigint => lines.reduce((sum, l) => sum + BigInt(l.amount), 0n);

/** The amounts of `pact.payouts` by `<kind>:<party>`, for one transition name (e.g. `settle`) or all. */
export function payoutTable(pact: Pact, transitionName?: string): Record<string, string> {
  const table: Record<string, string> = {};
  for (const p of pact.payouts) {
    if (transitionName === undefined || p.transition.startsWith(`${transitionName}.`)) table[`${p.kind}:${p.party}`] = p.amount;
  }
  return table;
}

type Cmd<T extends PactCommand['type']> = Extract<PactCommand, { type: T }>;

/** Builders of the commands `refusal()` judges. */
export const cmd = {
  fund: (signer: PartyId, stateNonce: number): Cmd<'fund'> => ({ type: 'fund', signer, stateNonce, proof: null }),
  withdraw: (signer: PartyId, stateNonce: number): Cmd<'withdraw'> => ({ type: 'withdraw', signer, stateNonce }),
  propose: (signer: PartyId, stateNonce: number, distribution: Share[], evidence: EvidenceItem[] = [{ note: 'done' }]): Cmd<'propose'> => ({
    type: 'propose', signer, stateNonce, proposal: { evidence, distribution },
  }),
  cosign: (signer: PartyId, stateNonce: number): Cmd<'cosign'> => ({ type: 'cosign', signer, stateNonce }),
  object: (signer: PartyId, stateNonce: number, reason = 'not delivered'): Cmd<'object'> => ({ type: 'object', signer, stateNonce, reason }),
  cancel: (signer: PartyId, stateNonce: number, approvedBy: PartyId[], expiresAt: number): Cmd<'cancel'> => ({
    type: 'cancel', signer, stateNonce, approvedBy, expiresAt,
  }),
  verdict: (verdict: VerdictBody): Cmd<'verdict'> => ({ type: 'verdict', verdict }),
  poke: (): Cmd<'poke'> => ({ type: 'poke' }),
  recordPayouts: (paid: { key: string; railRef: string }[]): Cmd<'recordPayouts'> => ({ type: 'recordPayouts', paid }),
};
