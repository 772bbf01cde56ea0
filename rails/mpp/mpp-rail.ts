import { createHash } from 'node:crypto';
import { Challenge, Credential, Method, PaymentRequest, Receipt } from 'mppx';
import { Methods } from 'mppx/evm';
import { charge as evmCharge } from 'mppx/evm/server';
import { formatUnits, getAddress } from 'viem';
import { signedAuthorizationOf } from '../evm/eip3009.js';
import type { EvmEscrow } from '../evm/evm-escrow.js';
import { RailError, type CollectRequest, type FundCall, type Quote, type QuoteRequest, type RailHealth, type RailReceipt } from '../rail.js';
import { EvmRail } from '../evm/evm-rail.js';
import type { MppConfig } from './config.js';

/** Binds the payer a credential proved as the party's mpp address (first write wins: a later one is kept out quietly). */
export type BindPayer = (party: string, address: string, call: FundCall) => Promise<void>;

type EvmCredential = ReturnType<typeof Credential.deserialize<Record<string, unknown>>>;

/**
 * The mpp rail: the `Payment` HTTP authentication scheme with mppx's `evm` charge method. The 402 carries a
 * challenge bound (by HMAC) to this pact, party, nonce, payer address and signed call; the paid retry sends the
 * same call with `Authorization: Payment <credential>`, whose EIP-3009 authorization the escrow wallet settles.
 */
export class MppRail extends EvmRail {
  readonly name = 'mpp' as const;
  readonly needsRailAddress = true;
  /** mppx's evm charge, used for its credential checks only: the escrow wallet settles. */
  private readonly method;

  constructor(
    escrow: EvmEscrow,
    private readonly config: MppConfig,
    private readonly bindPayer: BindPayer,
  ) {
    super(escrow);
    const { token, chainId } = escrow.config;
    this.method = evmCharge({
      currency: token.address,
      chainId,
      decimals: token.decimals,
      recipient: escrow.address,
      authorization: { name: token.name, version: token.version },
      settle: () => Promise.reject(new Error('the escrow wallet settles mpp credentials')),
    });
  }

  quote(request: QuoteRequest): Quote {
    const { token, chainId } = this.escrow.config;
    const challenge = Challenge.fromMethod(Methods.charge, {
      secretKey: this.config.secretKey,
      realm: this.config.realm,
      request: {
        amount: formatUnits(BigInt(request.amount.amount), token.decimals),
        chainId,
        currency: token.address,
        decimals: token.decimals,
        recipient: this.escrow.address,
        externalId: request.key,
      },
      description: request.call ? `fund pact ${request.pactId}` : `pay ${request.key}`,
      expires: new Date(Date.now() + this.config.challengeTtlMs).toISOString(),
      meta: boundTo(request),
    });
    const railData = {
      method: challenge.method,
      intent: challenge.intent,
      realm: challenge.realm,
      challengeId: challenge.id,
      expires: challenge.expires,
      chainId,
      currency: token.address,
      decimals: token.decimals,
      recipient: this.escrow.address,
      amount: request.amount.amount,
      authorization: { name: token.name, version: token.version },
    };
    return {
      requirement: { rail: 'mpp', amount: request.amount, asset: request.amount.asset, payTo: this.escrow.address, railData },
      headers: { 'www-authenticate': Challenge.serialize(challenge) },
    };
  }

  async collect(request: CollectRequest): Promise<RailReceipt> {
    const credential = this.credentialFor(request);
    const payload: unknown = credential.payload;
    const signed = typeof payload === 'object' && payload !== null ? signedAuthorizationOf({ authorization: payload, signature: (payload as { signature?: unknown }).signature }) : undefined;
    if (!signed) throw new RailError('invalid_proof', 'the credential holds no EIP-3009 authorization');
    const named = getAddress(payerAddressOf(request));
    if (signed.authorization.from !== named) throw new RailError('wrong_payer', `the credential pays from ${signed.authorization.from}, the call names ${named}`);
    const tx = await this.escrow.collect('mpp', request, signed, () => this.verify(credential));
    const paidFrom = tx.purpose.kind === 'collect' ? tx.purpose.payer : named; // a retry's answer: who paid the round
    if (request.call) await this.bindPayer(request.payer, paidFrom, request.call).catch((error: unknown) => console.error('binding the mpp payer failed:', String(error)));
    const receipt = Receipt.from({ method: credential.challenge.method, reference: tx.hash, status: 'success', timestamp: new Date().toISOString() });
    return { key: request.key, ref: tx.hash, headers: { 'payment-receipt': Receipt.serialize(receipt) } };
  }

  override async health(): Promise<RailHealth> {
    return { ...(await this.escrow.health()), method: this.config.method, intent: 'charge', realm: this.config.realm };
  }

  /** The credential in `Authorization: Payment …`, answering a challenge this server issued for this very call. */
  private credentialFor(request: CollectRequest): EvmCredential {
    if (typeof request.proof !== 'string') throw new RailError('invalid_proof', 'the mpp rail takes the proof in Authorization: Payment <credential>');
    let credential: EvmCredential;
    try {
      credential = Credential.deserialize<Record<string, unknown>>(request.proof);
    } catch {
      throw new RailError('invalid_proof', 'the Payment credential cannot be read');
    }
    const { challenge } = credential;
    if (!Challenge.verify(challenge, { secretKey: this.config.secretKey })) throw new RailError('invalid_proof', 'the challenge was not issued by this server, or was altered');
    if (challenge.method !== this.config.method || challenge.intent !== 'charge') throw new RailError('invalid_proof', `this rail charges with ${this.config.method}`);
    const expected = boundTo(request);
    // The challenge's meta travels as `opaque` (base64url JSON), bound by the HMAC checked above.
    const meta = (challenge.meta ?? (challenge.opaque ? PaymentRequest.deserialize(challenge.opaque) : {})) as Record<string, unknown>;
    if (Object.entries(expected).some(([name, value]) => meta[name] !== value)) {
      throw new RailError('invalid_proof', 'the credential answers another fund call: send the paid retry with the exact body of the call that got the 402');
    }
    return credential;
  }

  /**
   * Before a new settlement (a retry of one that settled is answered without it): the challenge is still
   * open, and mppx's own checks hold (the authorization pays exactly the challenge, to escrow, in its window,
   * signed by `from`, with the challenge's nonce).
   */
  private async verify(credential: EvmCredential): Promise<void> {
    const { expires } = credential.challenge;
    if (expires !== undefined && Date.parse(expires) <= Date.now()) throw new RailError('expired', 'the challenge has expired: ask for a new one with a new fund call');
    try {
      await Method.validateCredential([this.method], credential as never);
    } catch (error) {
      throw new RailError('invalid_proof', `the credential does not verify: ${String((error as Error).message ?? error).split('\n')[0]}`);
    }
  }
}

/**
 * The payer's address: the one the signed fund call names (the actor asks only with one: `needsRailAddress`), or,
 * where no pact is funded (a checkout), the one the request gives.
 */
function payerAddressOf(request: Pick<QuoteRequest, 'call' | 'railAddress'>): string {
  const address = request.call?.call.railAddress ?? request.railAddress;
  if (!address) throw new RailError('invalid_proof', 'mpp needs the payer\'s address (call.railAddress, or railAddress)');
  return request.call ? address : getAddress(address); // a checkout's address however it is spelled; a signed call's as signed
}

/**
 * What a challenge is bound to: the collect (a pact's funding round, or a checkout) and the payer address, and for
 * a pact's fund also the nonce and the signed call itself.
 */
function boundTo(request: Pick<QuoteRequest, 'key' | 'call' | 'railAddress'>): Record<string, string> {
  const { call } = request;
  const bound = { collect: request.key, railAddress: payerAddressOf(request) };
  return call ? { ...bound, stateNonce: String(call.stateNonce), call: createHash('sha256').update(call.sig).digest('base64url') } : bound;
}
