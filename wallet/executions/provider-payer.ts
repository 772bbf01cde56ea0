import { encodePaymentSignatureHeader } from '@x402/core/http';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmSchemeV1 } from '@x402/evm/v1';
import { Challenge, Credential } from 'mppx';
import { evm, Mppx } from 'mppx/client';
import { getAddress, type Hex, type LocalAccount } from 'viem';
import { privateKeyToAccount } from 'viem/accounts';
import type { ProviderAuthorization } from '../../machines/wallet/types.js';
import { chainReader, plainChain, type ChainReader } from '../../rails/evm/chain.js';
import { privateKeyFrom, type EvmConfig } from '../../rails/evm/config.js';
import { chainIdOfNetwork } from '../../rails/evm/networks.js';
import { eip3009TokenAbi } from '../../rails/evm/token-abi.js';
import { microUsdOf, unitsOf } from '../usd-units.js';

/** A provider's payment request this payer will not sign; nothing was signed. */
export class PaymentRefused extends Error {}

/** An x402 `accepts` entry (v2 `amount`, v1 `maxAmountRequired`). */
export interface X402Entry {
  scheme: string;
  network: string;
  amount?: string;
  maxAmountRequired?: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra?: Record<string, unknown>;
}

/** A signed payment, ready to send: the header that carries it and the authorization inside. */
export interface SignedPayment {
  header: Record<string, string>;
  authorization: ProviderAuthorization;
}

/** What the chain says of an authorization: taken (in that transaction), or not; `expired` when it never can be. */
export type Settlement = { used: true; reference: string | undefined } | { used: false; expired: boolean };

/** The longest an x402 authorization signed here stays usable: it bounds how long a lost call stays ambiguous. */
const MAX_VALIDITY_S = 120;

/**
 * The service's own payer key (WALLET_PROVIDER_KEY_FILE) on the rails' chain and token: it pays x402 and mpp
 * providers for executions, never more than an execution's hold, only in that token on that chain. Each payment is
 * an EIP-3009 authorization, so the chain tells afterwards whether a provider took it.
 */
export class ProviderPayer {
  /** CAIP-2 network of the chain. */
  readonly network: string;

  constructor(
    private readonly account: LocalAccount,
    private readonly evmConfig: EvmConfig,
    private readonly reader: ChainReader,
  ) {
    this.network = `eip155:${evmConfig.chainId}`;
  }

  static open(evmConfig: EvmConfig, keyFile: string): ProviderPayer {
    const reader = chainReader(plainChain(evmConfig.chainId, evmConfig.rpcUrl), evmConfig.pollingIntervalMs);
    return new ProviderPayer(privateKeyToAccount(privateKeyFrom(keyFile)), evmConfig, reader);
  }

  get address(): string {
    return this.account.address;
  }

  /** Why a provider paid on `network` in `asset` cannot be paid from here (none: it can). */
  refusalsFor(network: string | null, asset: string | null): string[] {
    const refusals: string[] = [];
    if (network === null || chainIdOfNetwork(network) !== this.evmConfig.chainId) refusals.push(`it is paid on ${network ?? 'no known network'}; this service's payer pays on ${this.network}`);
    if (asset === null || !sameAddress(asset, this.evmConfig.token.address)) refusals.push(`it is paid in ${asset ?? 'no known token'}; this service's payer holds ${this.evmConfig.token.address}`);
    return refusals;
  }

  /** The entry of an x402 402 to pay: `exact`, on this chain, in this token, at most `limit` micro-USD. */
  x402Entry(accepts: readonly X402Entry[], version: 1 | 2, limit: bigint): X402Entry {
    const exact = accepts.filter((entry) => entry.scheme === 'exact' && entry.network.startsWith('eip155:') === (version === 2));
    const ours = exact.filter((entry) => this.refusalsFor(entry.network, entry.asset).length === 0);
    if (ours.length === 0) throw new PaymentRefused(`the provider asks for no x402 v${version} exact payment in ${this.evmConfig.token.address} on ${this.network}`);
    const priced = ours.map((entry) => ({ entry, price: this.priceOf(entry.amount ?? entry.maxAmountRequired ?? '') }));
    const payable = priced.find(({ price }) => price !== undefined && price > 0n && price <= limit);
    if (!payable) throw new PaymentRefused(`the provider asks ${priced[0]!.price ?? 'an unreadable amount of'} micro-USD, more than the ${limit} held for this call`);
    return payable.entry;
  }

  /** Signs an x402 `exact` payment of `entry` (validity cut to MAX_VALIDITY_S), as the header of its version. */
  async signX402(entry: X402Entry, version: 1 | 2, resource: unknown): Promise<SignedPayment> {
    const signable = { ...entry, maxTimeoutSeconds: Math.min(entry.maxTimeoutSeconds, MAX_VALIDITY_S) };
    const fromBlock = await this.reader.getBlockNumber();
    if (version === 2) {
      const { payload } = await new ExactEvmScheme(this.account).createPaymentPayload(2, signable as never);
      const header = encodePaymentSignatureHeader({ x402Version: 2, ...(resource ? { resource } : {}), accepted: entry, payload } as never);
      return { header: { 'PAYMENT-SIGNATURE': header }, authorization: this.authorizationOf(payload.authorization as Eip3009, fromBlock) };
    }
    const signed = await new ExactEvmSchemeV1(this.account).createPaymentPayload(1, signable as never);
    const header = Buffer.from(JSON.stringify(signed)).toString('base64');
    return { header: { 'X-PAYMENT': header }, authorization: this.authorizationOf((signed.payload as { authorization: Eip3009 }).authorization, fromBlock) };
  }

  /** Answers an mpp 402 (`evm` method, `charge` intent) with a credential for at most `limit` micro-USD. */
  async signMpp(response: Response, limit: bigint): Promise<SignedPayment> {
    let challenge: ReturnType<typeof Challenge.fromHeaders>;
    try {
      challenge = Challenge.fromHeaders(response.headers);
    } catch (error) {
      throw new PaymentRefused(`the provider's 402 carries no Payment challenge: ${String(error)}`);
    }
    const request = challenge.request as { amount?: string; currency?: string; methodDetails?: { chainId?: number } };
    if (challenge.method !== 'evm' || challenge.intent !== 'charge') throw new PaymentRefused(`the provider asks for ${challenge.method} ${challenge.intent}; this service pays evm charges`);
    const refusals = this.refusalsFor(`eip155:${request.methodDetails?.chainId}`, request.currency ?? null);
    if (refusals.length > 0) throw new PaymentRefused(`the provider's challenge is not payable here: ${refusals.join('; ')}`);
    const price = this.priceOf(request.amount ?? '');
    if (price === undefined || price <= 0n || price > limit) throw new PaymentRefused(`the provider asks ${price ?? 'an unreadable amount of'} micro-USD, more than the ${limit} held for this call`);
    const { token, chainId } = this.evmConfig;
    const method = evm.charge({ account: this.account, authorization: { name: token.name, version: token.version }, networks: [chainId], currencies: [token.address], maxAtomicAmount: unitsOf(limit, token.decimals).toString() } as never);
    const fromBlock = await this.reader.getBlockNumber();
    let credential: string;
    try {
      credential = await Mppx.create({ methods: [method], polyfill: false }).createCredential(response);
    } catch (error) {
      throw new PaymentRefused(`the provider's challenge could not be answered: ${String(error)}`);
    }
    const { payload } = Credential.deserialize<Eip3009>(credential);
    return { header: { authorization: credential }, authorization: this.authorizationOf(payload, fromBlock) };
  }

  /** Whether the provider took the authorization: its use on the chain (and the transaction), or its expiry. */
  async settlementOf(authorization: ProviderAuthorization): Promise<Settlement> {
    const { token } = this.evmConfig;
    const [from, nonce] = [getAddress(authorization.from), authorization.nonce as Hex];
    const used = await this.reader.readContract({ address: token.address, abi: eip3009TokenAbi, functionName: 'authorizationState', args: [from, nonce] });
    if (used) {
      const logs = await this.reader.getContractEvents({ address: token.address, abi: eip3009TokenAbi, eventName: 'AuthorizationUsed', args: { authorizer: from, nonce }, fromBlock: BigInt(authorization.fromBlock) });
      return { used: true, reference: logs[0]?.transactionHash };
    }
    const latest = await this.reader.getBlock({ blockTag: 'latest' });
    return { used: false, expired: latest.timestamp >= BigInt(authorization.validBefore) };
  }

  /** An amount in token base units as micro-USD; undefined when it is no such amount. */
  private priceOf(units: string): bigint | undefined {
    return /^\d{1,30}$/.test(units) ? microUsdOf(BigInt(units), this.evmConfig.token.decimals) : undefined;
  }

  private authorizationOf(signed: Eip3009, fromBlock: bigint): ProviderAuthorization {
    return {
      network: this.network,
      asset: this.evmConfig.token.address,
      from: signed.from,
      to: signed.to,
      nonce: signed.nonce,
      value: String(signed.value),
      charged: (this.priceOf(String(signed.value)) ?? 0n).toString(),
      validBefore: Number(signed.validBefore),
      fromBlock: fromBlock.toString(),
    };
  }
}

type Eip3009 = { from: string; to: string; value: string; validBefore: string; nonce: string };

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
