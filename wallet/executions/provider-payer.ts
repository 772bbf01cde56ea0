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
import { PaymentRefused } from './payment-refused.js';


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

/** What the chain says of an authorization: taken (by that transaction), still open (usable until it lapses), or void (lapsed untaken). */
export type Settlement = { state: 'taken'; reference: string } | { state: 'open' } | { state: 'void' };

/** The longest an x402 authorization signed here stays usable: it bounds how long a lost call stays ambiguous. */
const X402_VALIDITY_S = 120;
/** An mpp authorization lives as long as its challenge (mppx signs `validBefore` from `expires`): no longer than this. */
const MPP_MAX_VALIDITY_S = 600;
/** Slack for the clocks of this server and the chain. */
const CLOCK_SLACK_S = 30;

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

  /** The payer of `keyFile`; never the escrow's own key (the escrow's money is the pacts'). */
  static open(evmConfig: EvmConfig, keyFile: string): ProviderPayer {
    const key = privateKeyFrom(keyFile);
    if (key.toLowerCase() === evmConfig.escrowKey.toLowerCase()) throw new Error('WALLET_PROVIDER_KEY_FILE holds the escrow key: the service pays providers from a key of its own');
    const reader = chainReader(plainChain(evmConfig.chainId, evmConfig.rpcUrl), evmConfig.pollingIntervalMs);
    return new ProviderPayer(privateKeyToAccount(key), evmConfig, reader);
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
    const priced = ours.map((entry) => ({ entry, price: this.priceOf((version === 2 ? entry.amount : entry.maxAmountRequired) ?? '') }));
    const payable = priced.find(({ price }) => price !== undefined && price > 0n && price <= limit);
    if (!payable) throw new PaymentRefused(`the provider asks ${priced[0]!.price ?? 'an unreadable amount of'} micro-USD, more than the ${limit} held for this call`);
    return payable.entry;
  }

  /** Signs an x402 `exact` payment of `entry` (validity cut to X402_VALIDITY_S), as the header of its version. */
  async signX402(entry: X402Entry, version: 1 | 2, resource: unknown): Promise<SignedPayment> {
    const signable = { ...entry, maxTimeoutSeconds: Math.min(Math.max(0, Math.floor(entry.maxTimeoutSeconds)) || X402_VALIDITY_S, X402_VALIDITY_S) };
    const fromBlock = await this.reader.getBlockNumber();
    const asked = BigInt((version === 2 ? entry.amount : entry.maxAmountRequired) ?? '-1');
    if (version === 2) {
      const { payload } = await new ExactEvmScheme(this.account).createPaymentPayload(2, signable as never);
      const header = encodePaymentSignatureHeader({ x402Version: 2, ...(resource ? { resource } : {}), accepted: entry, payload } as never);
      return { header: { 'PAYMENT-SIGNATURE': header }, authorization: await this.checked((payload as { authorization: Eip3009 }).authorization, asked, X402_VALIDITY_S, fromBlock) };
    }
    const signed = await new ExactEvmSchemeV1(this.account).createPaymentPayload(1, signable as never);
    const header = Buffer.from(JSON.stringify(signed)).toString('base64');
    return { header: { 'X-PAYMENT': header }, authorization: await this.checked((signed.payload as { authorization: Eip3009 }).authorization, asked, X402_VALIDITY_S, fromBlock) };
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
    const expires = challenge.expires === undefined ? Number.POSITIVE_INFINITY : Date.parse(challenge.expires) / 1000;
    if (!(expires <= Date.now() / 1000 + MPP_MAX_VALIDITY_S)) throw new PaymentRefused(`the provider's challenge expires ${challenge.expires ?? 'never'}: this service signs for at most ${MPP_MAX_VALIDITY_S} s`);
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
    return { header: { authorization: credential }, authorization: await this.checked(payload, BigInt(request.amount!), MPP_MAX_VALIDITY_S, fromBlock) };
  }

  /**
   * Whether the provider took the authorization, read at one block: its nonce used, by the transaction whose
   * `AuthorizationUsed` names it since it was signed; still open; or void (unused at a block past its `validBefore`).
   * A nonce used with no such event is a chain read that does not add up (a lagging node, pruned logs): an error,
   * asked again later, never taken as void.
   */
  async settlementOf(authorization: ProviderAuthorization): Promise<Settlement> {
    const { token } = this.evmConfig;
    const [from, nonce] = [getAddress(authorization.from), authorization.nonce as Hex];
    const block = await this.reader.getBlock({ blockTag: 'latest' });
    const used = await this.reader.readContract({ address: token.address, abi: eip3009TokenAbi, functionName: 'authorizationState', args: [from, nonce], blockNumber: block.number });
    if (!used) return block.timestamp >= BigInt(authorization.validBefore) ? { state: 'void' } : { state: 'open' };
    const logs = await this.reader.getContractEvents({ address: token.address, abi: eip3009TokenAbi, eventName: 'AuthorizationUsed', args: { authorizer: from, nonce }, fromBlock: BigInt(authorization.fromBlock), toBlock: block.number });
    if (!logs[0]) throw new Error(`the nonce ${nonce} is used but no AuthorizationUsed names it since block ${authorization.fromBlock}`);
    return { state: 'taken', reference: logs[0].transactionHash };
  }

  /** An amount in token base units as micro-USD; undefined when it is no such amount. */
  private priceOf(units: string): bigint | undefined {
    return /^\d{1,30}$/.test(units) ? microUsdOf(BigInt(units), this.evmConfig.token.decimals) : undefined;
  }

  /**
   * The authorization as signed, checked against what was asked: the amount priced, usable no longer than
   * `maxValidityS` (and a clock slack), and a nonce never used on the chain (a provider replaying a challenge gets nothing).
   */
  private async checked(signed: Eip3009, asked: bigint, maxValidityS: number, fromBlock: bigint): Promise<ProviderAuthorization> {
    const charged = this.priceOf(String(signed.value));
    if (charged === undefined || BigInt(signed.value) !== asked) throw new PaymentRefused(`the signed amount ${signed.value} is not the ${asked} asked`);
    if (Number(signed.validBefore) > Date.now() / 1000 + maxValidityS + CLOCK_SLACK_S) throw new PaymentRefused('the authorization would stay usable too long');
    const used = await this.reader.readContract({ address: this.evmConfig.token.address, abi: eip3009TokenAbi, functionName: 'authorizationState', args: [getAddress(signed.from), signed.nonce as Hex] });
    if (used) throw new PaymentRefused('the provider asked for a payment whose nonce is spent already');
    return {
      network: this.network,
      asset: this.evmConfig.token.address,
      from: getAddress(signed.from),
      to: getAddress(signed.to),
      nonce: signed.nonce,
      value: String(signed.value),
      charged: charged.toString(),
      validBefore: Number(signed.validBefore),
      fromBlock: fromBlock.toString(),
    };
  }
}

type Eip3009 = { from: string; to: string; value: string; validBefore: string; nonce: string };

const sameAddress = (a: string, b: string) => a.toLowerCase() === b.toLowerCase();
