import type { PartyId } from './party.js';

export const ACTIONS = [
  'pacts.create', 'pacts.fund', 'pacts.withdraw', 'pacts.propose', 'pacts.cosign', 'pacts.object',
  'pacts.cancel', 'offers.accept', 'rails.bindAddress', 'access.request', 'access.verify', 'access.admin',
] as const;
export type Action = (typeof ACTIONS)[number];

export interface SignedCall<T = unknown> {
  action: Action;
  call: T;
  pactId: string;
  stateNonce: number;
  issuedAt: number;
  signer: PartyId;
  sig: string;
}

export type UnsignedCall<T = unknown> = Omit<SignedCall<T>, 'sig'>;

/** The part of any signed object that its signature covers: everything but `sig`. */
export function signedPart<T extends { sig: string }>(signed: T): Omit<T, 'sig'> {
  const { sig: _sig, ...rest } = signed;
  return rest;
}
