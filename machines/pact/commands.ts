import type { PartyId } from '../../protocol/party.js';
import type { Proposal, VerdictBody } from './types.js';

/** What the gateway asks of a pact, after checking the body and the caller's signature. */
export type PactCommand =
  | { type: 'fund'; signer: PartyId; stateNonce: number; proof: unknown | null }
  | { type: 'withdraw'; signer: PartyId; stateNonce: number }
  | { type: 'propose'; signer: PartyId; stateNonce: number; proposal: Proposal }
  | { type: 'cosign'; signer: PartyId; stateNonce: number }
  | { type: 'object'; signer: PartyId; stateNonce: number; reason: string }
  | { type: 'cancel'; signer: PartyId; stateNonce: number; expiresAt: number; approvedBy: PartyId[] }
  | { type: 'verdict'; verdict: VerdictBody }
  | { type: 'poke' }
  | { type: 'recordPayouts'; paid: { key: string; railRef: string }[] };
