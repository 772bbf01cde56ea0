/**
 * Signed calls made ahead of sending, with node:crypto rather than the SDK's noble, so that the load
 * generator spends its time on HTTP. The signature is the SDK's (protocol/sign.ts): Ed25519 over
 * SHA-256(JCS(envelope)).
 */
import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { createdPactId } from '../../actors/admission.js';
import type { PactSpec } from '../../machines/pact/spec.js';
import { canonicalDigest } from '../../protocol/digest.js';
import { partyIdFromPublicKey, type PartyId } from '../../protocol/party.js';
import type { Action, SignedCall, UnsignedCall } from '../../protocol/signed-call.js';
import type { PreparedRequest } from './http.js';

export interface Signer {
  party: PartyId;
  privateKey: KeyObject;
}

/** A fresh Ed25519 key; its raw public key is the last 32 bytes of the SPKI DER form. */
export function newSigner(): Signer {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { party: partyIdFromPublicKey(raw), privateKey };
}

function signCall(signer: Signer, action: Action, pactId: string, stateNonce: number, call: unknown): SignedCall {
  const envelope: UnsignedCall = { action, call, pactId, stateNonce, issuedAt: Date.now(), signer: signer.party };
  return { ...envelope, sig: sign(null, canonicalDigest(envelope), signer.privateKey).toString('hex') };
}

/**
 * The pact's stateNonce before each step, as one lifecycle with PactClient answers it: a create leaves 0, and
 * every accepted fund and the proposal add one (a proofless fund, answered 402, changes nothing).
 */
const NONCE = { fundSeller: 0, fundBuyer: 1, propose: 2, cosign: 3 };
const PAYMENT_HEADERS = { 'x-payment': JSON.stringify({ scheme: 'mock' }) };

const specOf = (seller: Signer, buyer: Signer, terms: string): PactSpec => ({
  rail: 'mock',
  parties: [
    { party: seller.party, deposit: { amount: '0', asset: 'USDC' }, bond: { amount: '50', asset: 'USDC' }, required: true },
    { party: buyer.party, deposit: { amount: '1001', asset: 'USDC' }, bond: { amount: '75', asset: 'USDC' }, required: true },
  ],
  proposer: seller.party,
  terms: { spec: terms },
  minParties: 2,
});

/** A pact the bench creates: its id (known before the create is sent), its parties and the create request. */
export interface PlannedPact {
  id: string;
  seller: Signer;
  buyer: Signer;
  create: PreparedRequest;
}

export function plannedPact(terms: string): PlannedPact {
  const seller = newSigner();
  const buyer = newSigner();
  const call = signCall(seller, 'pacts.create', '', 0, specOf(seller, buyer, terms));
  return { id: createdPactId(call), seller, buyer, create: { route: 'create', path: '/pacts', body: JSON.stringify(call), expect: 200 } };
}

/** A fund with X-PAYMENT (accepted: 200) by `signer` at `stateNonce`. */
function paidFund(route: string, signer: Signer, pactId: string, stateNonce: number): PreparedRequest {
  const body = JSON.stringify(signCall(signer, 'pacts.fund', pactId, stateNonce, {}));
  return { route, path: `/pacts/${pactId}/fund`, body, headers: PAYMENT_HEADERS, expect: 200 };
}

/** The same fund call twice, as the 402 flow goes: without proof (402), then with X-PAYMENT (200). */
function fundFlow(signer: Signer, pactId: string, stateNonce: number): PreparedRequest[] {
  const paid = paidFund('fund (X-PAYMENT)', signer, pactId, stateNonce);
  return [{ route: 'fund (proofless)', path: paid.path, body: paid.body!, expect: 402 }, paid];
}

/** The 7 requests of one lifecycle: create, fund × 2 (402 then 200 each), propose, cosign (which settles). */
export function lifecycleRequests(): PreparedRequest[] {
  const { id, seller, buyer, create } = plannedPact('summarise the attached paper in 200 words');
  const proposal = { evidence: [{ note: 'delivered' }], distribution: [{ party: seller.party, bp: 7000 }, { party: buyer.party, bp: 3000 }] };
  const propose = signCall(seller, 'pacts.propose', id, NONCE.propose, proposal);
  const cosign = signCall(buyer, 'pacts.cosign', id, NONCE.cosign, {});
  return [
    create,
    ...fundFlow(seller, id, NONCE.fundSeller),
    ...fundFlow(buyer, id, NONCE.fundBuyer),
    { route: 'propose', path: `/pacts/${id}/propose`, body: JSON.stringify(propose), expect: 200 },
    { route: 'cosign', path: `/pacts/${id}/cosign`, body: JSON.stringify(cosign), expect: 200 },
  ];
}

/** Both funds (X-PAYMENT) of a pact still in CREATED, in the order they must go: the seller's, then the buyer's. */
export function bothFunds(pact: PlannedPact, routes: [seller: string, buyer: string]): [PreparedRequest, PreparedRequest] {
  return [paidFund(routes[0], pact.seller, pact.id, NONCE.fundSeller), paidFund(routes[1], pact.buyer, pact.id, NONCE.fundBuyer)];
}
