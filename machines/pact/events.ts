import type { PartyId } from '../../protocol/party.js';
import type { Proposal, Verdict } from './types.js';

/**
 * The facts the pact machine accepts. Each one that the machine accepts is journaled as is,
 * and replaying them through the machine rebuilds the pact. Time comes in as `at`.
 */
export type PactEvent =
  | { type: 'fund'; at: number; party: PartyId; receipt: string }
  | { type: 'withdraw'; at: number; party: PartyId }
  | { type: 'propose'; at: number; party: PartyId; proposal: Proposal }
  | { type: 'cosign'; at: number; party: PartyId }
  | { type: 'object'; at: number; party: PartyId; reason: string }
  | { type: 'cancel'; at: number; party: PartyId; approvedBy: PartyId[]; expiresAt: number }
  | { type: 'verdict'; at: number; verdict: Verdict }
  | { type: 'poke'; at: number }
  | { type: 'payoutsRecorded'; at: number; paid: { key: string; railRef: string }[] };

export type PactEventType = PactEvent['type'];
