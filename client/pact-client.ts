import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
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

/** A refusal as the service words it: `{ error, message, ...details }`. */
export interface ErrorBody {
  error: string;
  message?: string;
  [detail: string]: unknown;
}

export interface PactClientOptions {
  /** Stamps `issuedAt`; the wall clock unless a test says otherwise. */
  now?: () => number;
  /** How many times a call refused with 409 `stateNonce_mismatch` is re-signed on a fresh nonce and sent again. */
  nonceRetries?: number;
  fetch?: typeof fetch;
}

/** `(sent or received bytes, total bytes or undefined when unknown)` */
export type Progress = (done: number, total: number | undefined) => void;

/** The proof the mock rail takes: it moves test balances, no money. */
export const MOCK_PROOF = { scheme: 'mock' } as const;

const FUND_ATTEMPTS = 3;

/**
 * The SDK: a typed client of the HTTP API that signs every call with the agent's key (noble only, so it runs in
 * Node and in browsers) and answers with status, body and headers; a refusal is an answer, not an exception.
 * Only network failures throw.
 */
export class PactClient {
  private readonly now: () => number;
  private readonly nonceRetries: number;
  private readonly fetch: typeof fetch;

  constructor(
    readonly baseUrl: string,
    options: PactClientOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.nonceRetries = options.nonceRetries ?? 3;
    this.fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult<T>> {
    const response = await this.fetch(`${this.baseUrl}${path}`, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: response.status, body: await bodyOf(response), headers: response.headers };
  }

  /** A SignedCall for `action`, signed by `key`. */
  signedCall<T>(key: KeyPair, action: Action, pactId: string, stateNonce: number, call: T, issuedAt = this.now()) {
    const envelope: UnsignedCall<T> = { action, call, pactId, stateNonce, issuedAt, signer: key.party };
    return signed(envelope, key);
  }

  health() {
    return this.request<Health>('GET', '/health');
  }

  create(key: KeyPair, spec: PactSpec, issuedAt?: number) {
    return this.request<{ pact: Pact }>('POST', '/pacts', this.signedCall(key, 'pacts.create', '', 0, spec, issuedAt));
  }

  get(pactId: string) {
    return this.request<{ pact: Pact }>('GET', `/pacts/${segment(pactId)}`);
  }

  list(query: Record<string, string | number>) {
    return this.request<{ pacts: PactSummary[]; nextSince: number | null }>('GET', `/pacts?${queryOf(query)}`);
  }

  async nonceOf(pactId: string): Promise<number> {
    const read = await this.get(pactId);
    if (read.status !== 200) throw new PactRequestError(read);
    return read.body.pact.stateNonce;
  }

  /** The two-call 402 flow on the mock rail, or with a proof already in hand. */
  fund(key: KeyPair, pactId: string, proof: unknown = MOCK_PROOF) {
    return this.fundWith(key, pactId, async () => proof);
  }

  /**
   * The two-call 402 flow: a proofless call for the requirement, `pay` once for a proof, then the same
   * SignedCall with `X-PAYMENT`. An ambiguous outcome (a network failure or a 5xx) is reconciled by reading the
   * pact: already confirmed is success; otherwise the call is signed again on the current nonce and retried with
   * the same proof. `pay` is never asked a second time, so a retry can never pay twice.
   */
  async fundWith(key: KeyPair, pactId: string, pay: (requirement: Requirement) => Promise<unknown>, headers: Record<string, string> = {}): Promise<HttpResult> {
    let call = this.signedCall(key, 'pacts.fund', pactId, await this.nonceOf(pactId), {});
    const quote = await this.request<{ requirement: Requirement }>('POST', `/pacts/${segment(pactId)}/fund`, call);
    if (quote.status !== 402) return quote;
    const proof = await pay(quote.body.requirement);
    // A string is the header's text as the rail made it (JSON or base64 JSON); anything else is sent as JSON.
    const payment = { ...headers, 'x-payment': typeof proof === 'string' ? proof : JSON.stringify(proof) };
    for (let attempt = 1; ; attempt++) {
      const paid = await this.request<{ pact: Pact }>('POST', `/pacts/${segment(pactId)}/fund`, call, payment).catch(() => undefined);
      if (paid && paid.status < 500 && !isNonceConflict(paid)) return paid;
      const pact = (await this.get(pactId).catch(() => undefined))?.body?.pact as Pact | undefined;
      if (pact?.parties.some((p) => p.party === key.party && p.confirmed)) return { status: 200, body: { pact }, headers: new Headers() };
      if (attempt === FUND_ATTEMPTS || !pact) {
        if (paid) return paid;
        throw new Error(`funding ${pactId}: the outcome is unknown (no answer); read the pact before paying again`);
      }
      call = this.signedCall(key, 'pacts.fund', pactId, pact.stateNonce, {});
    }
  }

  /**
   * Funds from wallet credit: the wallet this party bound on the credit rail (`bindWallet`) holds the deposit and
   * bond, and its access token goes with the paid call as the wallet's consent.
   */
  fundWithCredit(key: KeyPair, pactId: string, walletId: string, accessToken: string): Promise<HttpResult> {
    return this.fundWith(key, pactId, async () => ({ scheme: 'credit', walletId }), { authorization: `Bearer ${accessToken}` });
  }

  /**
   * The mpp flow: a proofless call naming the payer's `railAddress`, `pay` once for a credential answering the
   * 402's `WWW-Authenticate: Payment` challenge, then the very same body with `Authorization: Payment`. An
   * ambiguous outcome is reconciled by reading the pact before the same body and credential go again; neither
   * is ever made a second time (a credential is bound to the call it answers).
   */
  async fundWithMpp(key: KeyPair, pactId: string, railAddress: string, pay: (challenge: HttpResult<{ requirement: Requirement }>) => Promise<string>): Promise<HttpResult> {
    const path = `/pacts/${segment(pactId)}/fund`;
    const body = JSON.stringify(this.signedCall(key, 'pacts.fund', pactId, await this.nonceOf(pactId), { railAddress }));
    const challenge = await this.request<{ requirement: Requirement }>('POST', path, body);
    if (challenge.status !== 402) return challenge;
    const credential = await pay(challenge);
    for (let attempt = 1; ; attempt++) {
      const paid = await this.request<{ pact: Pact }>('POST', path, body, { authorization: credential }).catch(() => undefined);
      if (paid && paid.status < 500 && !isNonceConflict(paid)) return paid;
      const pact = (await this.get(pactId).catch(() => undefined))?.body?.pact as Pact | undefined;
      if (pact?.parties.some((p) => p.party === key.party && p.confirmed)) return { status: 200, body: { pact }, headers: new Headers() };
      if (attempt === FUND_ATTEMPTS || !pact || (paid && isNonceConflict(paid))) {
        if (paid) return paid;
        throw new Error(`funding ${pactId}: the outcome is unknown (no answer); read the pact before paying again`);
      }
    }
  }

  /**
   * A signed pact route. Without `nonce`, the pact's current one is read, and a 409 `stateNonce_mismatch` (someone
   * moved the pact in between) is answered by signing again on the new nonce, at most `nonceRetries` times.
   */
  async signedRoute(key: KeyPair, route: string, action: Action, pactId: string, call: unknown, nonce?: number) {
    const send = (stateNonce: number) => this.request<{ pact: Pact }>('POST', `/pacts/${segment(pactId)}/${route}`, this.signedCall(key, action, pactId, stateNonce, call));
    if (nonce !== undefined) return send(nonce);
    let answer = await send(await this.nonceOf(pactId));
    for (let retry = 0; retry < this.nonceRetries && isNonceConflict(answer); retry++) {
      const current = (answer.body as unknown as ErrorBody).currentNonce;
      answer = await send(typeof current === 'number' ? current : await this.nonceOf(pactId));
    }
    return answer;
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

  /** One party's approval of a mutual cancel at `stateNonce`, to hand to whoever submits it. */
  cancelApproval(key: KeyPair, pactId: string, stateNonce: number, expiresAt: number): CancelApproval {
    return { signer: key.party, sig: signPayload({ action: 'cancel', pactId, stateNonce, expiresAt }, key) };
  }

  /** Submits a mutual cancel with every party's approval, all signed for `stateNonce` (never retried on another). */
  submitCancel(key: KeyPair, pactId: string, stateNonce: number, expiresAt: number, sigs: CancelApproval[]) {
    return this.signedRoute(key, 'cancel', 'pacts.cancel', pactId, { expiresAt, sigs }, stateNonce);
  }

  /** Mutual cancel when one holder has every key: each in `approvers` approves, `key` submits. */
  async cancel(key: KeyPair, pactId: string, approvers: KeyPair[], expiresAt: number) {
    const stateNonce = await this.nonceOf(pactId);
    const sigs = approvers.map((approver) => this.cancelApproval(approver, pactId, stateNonce, expiresAt));
    return this.submitCancel(key, pactId, stateNonce, expiresAt, sigs);
  }

  verdict(evaluator: KeyPair, pactId: string, inputHash: string, distribution: Share[], feeFrom: FeeFrom, reason?: string) {
    const body = { pactId, inputHash, distribution, feeFrom, ...(reason ? { reason } : {}), issuedAt: this.now(), signer: evaluator.party };
    return this.request<{ pact: Pact }>('POST', `/pacts/${segment(pactId)}/verdict`, signed(body, evaluator));
  }

  poke(pactId: string) {
    return this.request<{ pact: Pact }>('POST', `/pacts/${segment(pactId)}/poke`);
  }

  /** Publishes this party's payout address on a rail (first write wins); the rail is signed, so the call binds there only. */
  bindAddress(key: KeyPair, rail: string, address: string) {
    return this.request('POST', `/rails/${segment(rail)}/address`, this.signedCall(key, 'rails.bindAddress', '', 0, { rail, address }));
  }

  /** Binds a credit wallet to this party (first write wins), proving control of it with the wallet's access token. */
  bindWallet(key: KeyPair, walletId: string, accessToken: string) {
    const call = this.signedCall(key, 'rails.bindAddress', '', 0, { rail: 'credit', address: walletId });
    return this.request('POST', '/rails/credit/address', call, { authorization: `Bearer ${accessToken}` });
  }

  /** Uploads evidence bytes with signed headers; `declareHash` also sends `x-pact-sha256` (the signed hash). */
  async putBlob(
    key: KeyPair,
    pactId: string,
    bytes: Uint8Array,
    options: { issuedAt?: number; declareHash?: boolean; signedHash?: string; onProgress?: Progress } = {},
  ) {
    const issuedAt = options.issuedAt ?? this.now();
    const sha256Hex = options.signedHash ?? bytesToHex(sha256(bytes));
    const response = await this.fetch(`${this.baseUrl}/pacts/${segment(pactId)}/blobs`, {
      method: 'POST',
      headers: {
        'content-type': 'application/octet-stream',
        'content-length': String(bytes.length),
        'x-pact-signer': key.party,
        'x-pact-issued-at': String(issuedAt),
        'x-pact-signature': signPayload({ action: 'put', pactId, sha256: sha256Hex, issuedAt }, key),
        ...(options.declareHash ? { 'x-pact-sha256': sha256Hex } : {}),
      },
      ...uploadBody(bytes, options.onProgress),
    });
    return { status: response.status, body: (await bodyOf(response)) as { hash: string } & Record<string, unknown>, headers: response.headers };
  }

  /** A download link for a blob of the pact: `{ url, expiresAt }`, the url relative for the local store. */
  link(key: KeyPair, pactId: string, hash: string, issuedAt = this.now()) {
    const body = { signer: key.party, issuedAt, sig: signPayload({ action: 'link', pactId, hash, issuedAt }, key) };
    return this.request<{ url: string; expiresAt: number }>('POST', `/pacts/${segment(pactId)}/blobs/${segment(hash)}/link`, body);
  }

  /** The bytes behind a link (a relative one is resolved against the service). */
  async download(url: string, onProgress?: Progress): Promise<{ status: number; bytes: Uint8Array; body?: unknown }> {
    const response = await this.fetch(new URL(url, this.baseUrl));
    if (!response.ok) return { status: response.status, bytes: new Uint8Array(), body: await bodyOf(response) };
    const total = Number(response.headers.get('content-length')) || undefined;
    return { status: response.status, bytes: await readAll(response, total, onProgress) };
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
    return this.request<{ pact: Pact }>('POST', `/offers/${segment(offerId)}/accept`, this.signedCall(key, 'offers.accept', offerId, 0, { acceptanceId }, issuedAt));
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
    return this.request<{ mode: string; status: string }>('GET', `/access/${segment(party)}`);
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
}

/** What a 402 asks for: the amount, where it goes, and the rail's own data. */
export interface Requirement {
  rail: string;
  amount: { amount: string; asset: string };
  payTo: string;
  railData: Record<string, unknown>;
}

export interface CancelApproval {
  signer: string;
  sig: string;
}

/** The parts of `GET /health` a client decides by. */
export interface Health {
  ok: boolean;
  time: number;
  version: string;
  rails: string[];
  access: { mode: 'open' | 'invite' };
  serverParty: string;
  evaluator: Record<string, unknown>;
  [field: string]: unknown;
}

/** A read the caller needed (say, a pact's nonce) was refused. */
export class PactRequestError extends Error {
  constructor(readonly result: HttpResult) {
    super(`${result.status} ${(result.body as ErrorBody | undefined)?.error ?? ''}`.trim());
  }
}

export const isNonceConflict = (result: HttpResult) => result.status === 409 && (result.body as ErrorBody | undefined)?.error === 'stateNonce_mismatch';

/** A value put in a path: encoded, so an id can never name another route. */
const segment = encodeURIComponent;

const queryOf = (query: Record<string, string | number>) => new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)]));

/** JSON when the answer says so (or parses as such), else its text; nothing for an empty body. */
async function bodyOf(response: Response): Promise<any> {
  const text = await response.text();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

const CHUNK = 64 * 1024;

/** The request body: the bytes as they are, or a stream of them that reports progress as it is read. */
function uploadBody(bytes: Uint8Array, onProgress?: Progress): Pick<RequestInit, 'body'> & { duplex?: 'half' } {
  if (!onProgress) return { body: Uint8Array.from(bytes) };
  let sent = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (sent >= bytes.length) return controller.close();
      const chunk = bytes.slice(sent, sent + CHUNK);
      sent += chunk.length;
      controller.enqueue(chunk);
      onProgress(sent, bytes.length);
    },
  });
  return { body: stream, duplex: 'half' };
}

async function readAll(response: Response, total: number | undefined, onProgress?: Progress): Promise<Uint8Array> {
  if (!onProgress || !response.body) return new Uint8Array(await response.arrayBuffer());
  const chunks: Uint8Array[] = [];
  let received = 0;
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    chunks.push(chunk);
    received += chunk.length;
    onProgress(received, total);
  }
  const bytes = new Uint8Array(received);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.length;
  }
  return bytes;
}
