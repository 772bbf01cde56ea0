import { createHash } from 'node:crypto';
import type { PactSpec } from '../machines/pact/spec.js';
import type { Offer, SignedOffer } from '../machines/offer/types.js';
import type { FeeFrom, Pact, Proposal, Share } from '../machines/pact/types.js';
import type { PactSummary } from '../projection/read-model.js';
import { signed, signPayload, type KeyPair } from '../protocol/sign.js';
import type { Action, UnsignedCall } from '../protocol/signed-call.js';

export interface HttpResult<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A thin SDK over the HTTP API: it signs every call with the agent's key (noble) and returns status + body. */
export class PactClient {
  constructor(
    readonly baseUrl: string,
    private readonly now: () => number = Date.now,
  ) {}

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult<T>> {
    const response = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? JSON.parse(text) : undefined, headers: response.headers };
  }

  /** A SignedCall for `action`, signed by `key`. */
  signedCall<T>(key: KeyPair, action: Action, pactId: string, stateNonce: number, call: T, issuedAt = this.now()) {
    const envelope: UnsignedCall<T> = { action, call, pactId, stateNonce, issuedAt, signer: key.party };
    return signed(envelope, key);
  }

  create(key: KeyPair, spec: PactSpec, issuedAt?: number) {
    return this.request<{ pact: Pact }>('POST', '/pacts', this.signedCall(key, 'pacts.create', '', 0, spec, issuedAt));
  }

  get(pactId: string) {
    return this.request<{ pact: Pact }>('GET', `/pacts/${pactId}`);
  }

  list(query: Record<string, string | number>) {
    return this.request<{ pacts: PactSummary[]; nextSince: number | null }>('GET', `/pacts?${queryOf(query)}`);
  }

  async nonceOf(pactId: string): Promise<number> {
    return (await this.get(pactId)).body.pact.stateNonce;
  }

  /** The two-call 402 flow: a proofless call for the requirement, then the same call with X-PAYMENT. */
  async fund(key: KeyPair, pactId: string, proof: unknown = { scheme: 'mock' }) {
    const call = this.signedCall(key, 'pacts.fund', pactId, await this.nonceOf(pactId), {});
    const quote = await this.request('POST', `/pacts/${pactId}/fund`, call);
    if (quote.status !== 402) return quote;
    return this.request<{ pact: Pact }>('POST', `/pacts/${pactId}/fund`, call, { 'x-payment': JSON.stringify(proof) });
  }

  async signedRoute(key: KeyPair, route: string, action: Action, pactId: string, call: unknown, nonce?: number) {
    const stateNonce = nonce ?? (await this.nonceOf(pactId));
    return this.request<{ pact: Pact }>('POST', `/pacts/${pactId}/${route}`, this.signedCall(key, action, pactId, stateNonce, call));
  }

  withdraw(key: KeyPair, pactId: string) {
    return this.signedRoute(key, 'withdraw', 'pacts.withdraw', pactId, {});
  }

  propose(key: KeyPair, pactId: string, proposal: Proposal) {
    return this.signedRoute(key, 'propose', 'pacts.propose', pactId, proposal);
  }

  cosign(key: KeyPair, pactId: string) {
    return this.signedRoute(key, 'cosign', 'pacts.cosign', pactId, {});
  }

  object(key: KeyPair, pactId: string, reason: string) {
    return this.signedRoute(key, 'object', 'pacts.object', pactId, { reason });
  }

  /** Mutual cancel: every key in `approvers` signs the approval; `key` submits. */
  async cancel(key: KeyPair, pactId: string, approvers: KeyPair[], expiresAt: number) {
    const stateNonce = await this.nonceOf(pactId);
    const approval = { action: 'cancel', pactId, stateNonce, expiresAt };
    const sigs = approvers.map((a) => ({ signer: a.party, sig: signPayload(approval, a) }));
    return this.signedRoute(key, 'cancel', 'pacts.cancel', pactId, { expiresAt, sigs }, stateNonce);
  }

  verdict(evaluator: KeyPair, pactId: string, inputHash: string, distribution: Share[], feeFrom: FeeFrom, reason?: string) {
    const body = { pactId, inputHash, distribution, feeFrom, ...(reason ? { reason } : {}), issuedAt: this.now(), signer: evaluator.party };
    return this.request<{ pact: Pact }>('POST', `/pacts/${pactId}/verdict`, signed(body, evaluator));
  }

  /** Uploads evidence bytes with signed headers; `declareHash` also sends `x-pact-sha256` (the signed hash). */
  async putBlob(key: KeyPair, pactId: string, bytes: Uint8Array, options: { issuedAt?: number; declareHash?: boolean; signedHash?: string } = {}) {
    const issuedAt = options.issuedAt ?? this.now();
    const sha256 = options.signedHash ?? createHash('sha256').update(bytes).digest('hex');
    const response = await fetch(`${this.baseUrl}/pacts/${pactId}/blobs`, {
      method: 'POST',
      headers: {
        'content-type': 'application/octet-stream',
        'x-pact-signer': key.party,
        'x-pact-issued-at': String(issuedAt),
        'x-pact-signature': signPayload({ action: 'put', pactId, sha256, issuedAt }, key),
        ...(options.declareHash ? { 'x-pact-sha256': sha256 } : {}),
      },
      body: Uint8Array.from(bytes),
    });
    return { status: response.status, body: (await response.json()) as { hash: string } & Record<string, unknown>, headers: response.headers };
  }

  /** A download link for a blob of the pact: `{ url, expiresAt }`, the url relative for the local store. */
  link(key: KeyPair, pactId: string, hash: string, issuedAt = this.now()) {
    const body = { signer: key.party, issuedAt, sig: signPayload({ action: 'link', pactId, hash, issuedAt }, key) };
    return this.request<{ url: string; expiresAt: number }>('POST', `/pacts/${pactId}/blobs/${hash}/link`, body);
  }

  /** The bytes behind a link (a relative one is resolved against the service). */
  async download(url: string): Promise<{ status: number; bytes: Uint8Array }> {
    const response = await fetch(new URL(url, this.baseUrl));
    return { status: response.status, bytes: new Uint8Array(await response.arrayBuffer()) };
  }

  /** Publishes an offer signed by `key` (`by` is the key's party). */
  publishOffer(key: KeyPair, offer: Omit<SignedOffer, 'by' | 'sig'>) {
    return this.request<{ offer: Offer }>('POST', '/offers', signed({ by: key.party, ...offer }, key));
  }

  /** `GET /offers`: `tags` comma-joined, `q` words of the text, `by`, `since`, `limit`. */
  searchOffers(query: Record<string, string | number> = {}) {
    return this.request<{ offers: Offer[]; nextSince: number | null }>('GET', `/offers?${queryOf(query)}`);
  }

  /** `GET /offers/watch`: the search's filters plus `timeoutMs` (at most 30000). */
  watchOffers(query: Record<string, string | number> = {}) {
    return this.request<{ offers: Offer[]; nextSince: number | null }>('GET', `/offers/watch?${queryOf(query)}`);
  }

  /** Accepts a template offer; the same `acceptanceId` again answers with the same pact. */
  acceptOffer(key: KeyPair, offerId: string, acceptanceId: string, issuedAt?: number) {
    return this.request<{ pact: Pact }>('POST', `/offers/${offerId}/accept`, this.signedCall(key, 'offers.accept', offerId, 0, { acceptanceId }, issuedAt));
  }

  /** Asks an invite-mode server to mail a one-time code to `email` for this key. */
  requestAccess(key: KeyPair, email: string, useCase?: string, issuedAt?: number) {
    return this.request('POST', '/access/request', this.signedCall(key, 'access.request', '', 0, { email, ...(useCase ? { useCase } : {}) }, issuedAt));
  }

  /** Sends back the code mailed for this key: `allowed` or `pending`. */
  verifyAccess(key: KeyPair, otp: string, issuedAt?: number) {
    return this.request('POST', '/access/verify', this.signedCall(key, 'access.verify', '', 0, { otp }, issuedAt));
  }

  /** `{ mode, status }` of a party. */
  accessOf(party: string) {
    return this.request<{ mode: string; status: string }>('GET', `/access/${party}`);
  }

  /** An operator's `access.admin` call, signed with the admin key. */
  adminAccess(key: KeyPair, call: { action: string; target?: string; note?: string }) {
    return this.request('POST', '/access/admin', this.signedCall(key, 'access.admin', '', 0, call));
  }

  /** `POST /v0/events` with a signed event (see client/stream.ts). */
  publishEvent(event: unknown) {
    return this.request<{ accepted: true; eventId: string }>('POST', '/v0/events', event);
  }

  /** `POST /v0/pull`. */
  pull(request: Record<string, unknown> = {}) {
    return this.request<{ events: any[]; nextCursor: string; hasMore: boolean }>('POST', '/v0/pull', request);
  }

  poke(pactId: string) {
    return this.request<{ pact: Pact }>('POST', `/pacts/${pactId}/poke`);
  }
}

const queryOf = (query: Record<string, string | number>) => new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));
