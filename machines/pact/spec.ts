import { pactError, type PactError } from '../../protocol/errors.js';
import { isPartyId, type PartyId } from '../../protocol/party.js';
import type { EvaluatorPolicy, Pact, PartySpec, RailName, Windows } from './types.js';

/** The `call` of `pacts.create`, after schema validation. */
export interface PactSpec {
  rail: RailName;
  parties: PartySpec[];
  proposer?: PartyId;
  terms: { spec: string } & Record<string, unknown>;
  minParties: number;
  windows?: Partial<Windows>;
  groupId?: string;
  evaluator?: Record<string, never>;
}

export const HOUR = 3_600_000;
export const DEFAULT_WINDOWS: Windows = { fund: 24 * HOUR, perform: 168 * HOUR, object: 72 * HOUR };

/** What the server pins into every pact it creates. */
export interface ServerPolicy {
  evaluator: EvaluatorPolicy;
  arbitrationFeeRecipient: PartyId;
}

/** Rules of a spec that a schema cannot say. */
export function specProblem(spec: PactSpec): PactError | undefined {
  const invalid = (field: string, message: string) => pactError('invalid_request', message, { field });
  if (spec.evaluator !== undefined && Object.keys(spec.evaluator).length > 0) {
    return pactError('evaluator_policy_is_server_owned', 'the evaluator policy is set by the server', {
      field: 'call.evaluator',
    });
  }
  const ids = spec.parties.map((p) => p.party);
  const badKey = ids.findIndex((id) => !isPartyId(id));
  if (badKey >= 0) return invalid(`call.parties.${badKey}.party`, 'not an Ed25519 public key');
  if (new Set(ids).size !== ids.length) return invalid('call.parties', 'a party appears twice');
  const assets = new Set(spec.parties.flatMap((p) => [p.deposit.asset, p.bond.asset]));
  if (assets.size !== 1) return invalid('call.parties', 'one pact uses exactly one asset');
  if (spec.minParties > spec.parties.length) {
    return invalid('call.minParties', 'minParties is larger than the number of parties');
  }
  const proposer = spec.proposer ?? ids[0];
  const proposerEntry = spec.parties.find((p) => p.party === proposer);
  if (!proposerEntry) return invalid('call.proposer', 'the proposer must be one of the parties');
  if (!proposerEntry.required) return invalid('call.proposer', 'the proposer must be a required party');
  return undefined;
}

export function newPact(input: {
  id: string;
  spec: PactSpec;
  createdBy: PartyId;
  at: number;
  policy: ServerPolicy;
  escrowAccount: string;
  sourceOffer?: Pact['sourceOffer'];
}): Pact {
  const { spec, at } = input;
  const windows: Windows = { ...DEFAULT_WINDOWS, ...spec.windows };
  return {
    id: input.id,
    state: 'CREATED',
    stateNonce: 0,
    rail: spec.rail,
    asset: spec.parties[0]!.deposit.asset,
    parties: spec.parties.map((p) => ({
      party: p.party,
      deposit: p.deposit,
      bond: p.bond,
      required: p.required,
      confirmed: false,
      paidPot: '0',
      paidBond: '0',
      fundedAt: null,
      receipt: null,
      withdrawals: 0,
    })),
    proposer: spec.proposer ?? spec.parties[0]!.party,
    terms: spec.terms,
    minParties: spec.minParties,
    windows,
    groupId: spec.groupId ?? null,
    createdBy: input.createdBy,
    createdAt: at,
    updatedAt: at,
    fundBy: at + windows.fund,
    activeAt: null,
    performBy: null,
    proposedAt: null,
    objectBy: null,
    disputedAt: null,
    verdictBy: null,
    closedAt: null,
    proposal: null,
    inputHash: null,
    cosigns: [],
    objection: null,
    verdict: null,
    settlement: null,
    payouts: [],
    evaluator: input.policy.evaluator,
    arbitrationFeeRecipient: input.policy.arbitrationFeeRecipient,
    escrowAccount: input.escrowAccount,
    sourceOffer: input.sourceOffer ?? null,
  };
}
