import type { Address } from 'viem';
import type { PartyId } from '../../protocol/party.js';
import { RailError, railReady, type CollectAt, type CollectPlace, type CollectRequest, type PayoutRequest, type RailHealth, type RailReceipt } from '../rail.js';
import type { ChainReader } from './chain.js';
import type { EvmConfig } from './config.js';
import { authorizationKey, tokenTransfer, transferWithAuthorization, type SignedAuthorization } from './eip3009.js';
import { claimOf, KeySpentElsewhere, shortError, WouldRevert, type EscrowWallet } from './escrow-wallet.js';
import { eip3009TokenAbi } from './token-abi.js';
import type { WalletTx } from './wallet-log.js';

/** A collect waits this long for its receipt inside the fund call (the gateway waits 10 s for the actor's answer). */
const COLLECT_WAIT_MS = 8_000;
const PAYOUT_WAIT_MS = 60_000;
/** x402's facilitator wants an authorization valid this much longer, so that it cannot expire while it settles. */
const VALIDITY_MARGIN_S = 6n;
const HEALTH_TTL_MS = 2_000;
const CHAIN_ANSWER_MS = 2_000;
/** Receipts of payouts without a known outcome read for a judgement, the newest first: more wait for the wallet's own pass. */
const PAYOUTS_READ = 32;
/** An escrow transaction without a receipt for this long stalls the wallet (every later nonce waits on it). */
const STALLED_AFTER_MS = 120_000;

/** Where a party's payouts on a rail go, when it bound an address there (`POST /rails/:rail/address`). */
export type BoundAddressOf = (rail: string, party: PartyId) => Promise<string | undefined>;

/** A rail's verification of the payer's signature and terms (x402's facilitator, mppx's credential check). */
export type VerifyProof = () => Promise<void>;

/**
 * Escrow on an EVM chain, shared by the x402 and mpp rails: collects settle a payer's EIP-3009 authorization,
 * payouts are token transfers, both sent by the one escrow wallet; the books and readiness are the wallet's.
 */
export class EvmEscrow {
  private lastHealth: { at: number; health: Promise<EvmHealth> } | undefined;
  private readyNow = false;
  /** Payout keys held because their payee has no address on the rail (shown in `/health`). */
  private readonly waitingForAddress = new Set<string>();

  constructor(
    readonly config: EvmConfig,
    private readonly wallet: EscrowWallet,
    private readonly reader: ChainReader,
    private readonly boundAddressOf: BoundAddressOf,
  ) {}

  get address(): Address {
    return this.wallet.address;
  }

  get ready(): boolean {
    return this.readyNow;
  }

  /**
   * Moves the authorized amount into escrow for `request`: once per funding round (a settled collect is that
   * round's answer, whatever proof a retry brings) and once per authorization (one spent for another round is
   * `proof_already_used`); the escrow wallet holds both rules when it records. `verify` checks the rail's
   * proof before anything is sent. Trouble of the chain or of NATS is `rail_failure`: retry with the same proof.
   */
  async collect(rail: string, request: CollectRequest, signed: SignedAuthorization, verify: VerifyProof): Promise<WalletTx> {
    return asRailError(async () => {
      const settled = await this.settledCollect(request.key);
      if (settled) return settled;
      const key = authorizationKey(signed.authorization);
      const attempts = await this.wallet.attempts(key);
      const spent = await this.wallet.live(attempts);
      if (spent && claimOf(spent) !== request.key) throw proofUsed(); // said at once; the wallet holds the rule when it records
      if (!spent) {
        this.checkTerms(signed, BigInt(request.amount.amount));
        await this.checkChain(signed);
      }
      await verify();
      const { authorization } = signed;
      const purpose = { kind: 'collect', rail, collectKey: request.key, pactId: request.pactId, party: request.payer, payer: authorization.from, amount: request.amount.amount } as const;
      const tx = await this.wallet.send(key, transferWithAuthorization(this.config.token.address, signed), purpose).catch((error: unknown) => {
        if (error instanceof KeySpentElsewhere) throw proofUsed();
        if (error instanceof WouldRevert) throw new RailError('invalid_proof', `the chain refuses this authorization: ${error.message}`);
        throw error;
      });
      return this.settledOrThrow(tx, COLLECT_WAIT_MS);
    });
  }

  /**
   * Pays `request` out of escrow, at most once per key: a reversal to the address its collect was paid from;
   * anything else to the payee's bound address, else to the address it paid this pact from, else its latest.
   */
  async payout(rail: string, request: PayoutRequest): Promise<RailReceipt> {
    return asRailError(async () => {
      const key = `payout:${request.key}`;
      const last = (await this.wallet.attempts(key)).at(-1);
      const to = last?.purpose.kind === 'payout' ? last.purpose.to : await this.payeeAddress(rail, request);
      if (!to) {
        this.waitingForAddress.add(request.key);
        throw new RailError('no_address', `${request.payee} has no ${rail} address: it waits until one is bound (POST /rails/${rail}/address)`);
      }
      this.waitingForAddress.delete(request.key);
      const amount = request.amount.amount;
      const purpose = { kind: 'payout', rail, pactId: request.pactId, party: request.payee, to, amount } as const;
      const tx = await this.wallet.send(key, tokenTransfer(this.config.token.address, to, BigInt(amount)), purpose);
      await this.settledOrThrow(tx, PAYOUT_WAIT_MS);
      return { key: request.key, ref: tx.hash };
    });
  }

  /** The wallet's log: the collects of `rail`, and none at its other transactions. */
  async *collects(rail: string, from: number): AsyncIterable<CollectAt> {
    const txs = await this.wallet.transactions();
    for (let position = from; position < txs.length; position++) yield { position, place: await this.placeOf(rail, txs[position]!) };
  }

  async collectAt(rail: string, position: number): Promise<CollectPlace> {
    const tx = (await this.wallet.transactions())[position];
    return tx ? this.placeOf(rail, tx) : 'none';
  }

  /** A collect of `rail` once its receipt says it succeeded; none when it reverted (or is no collect of `rail`). */
  private async placeOf(rail: string, tx: WalletTx): Promise<CollectPlace> {
    const { purpose } = tx;
    if (purpose.kind !== 'collect' || purpose.rail !== rail) return 'none';
    const outcome = await this.wallet.receiptOutcome(tx).catch(() => undefined);
    if (outcome === undefined) return 'undetermined';
    if (outcome === 'reverted') return 'none';
    return { key: purpose.collectKey, ref: tx.hash, payer: purpose.party, amount: { amount: purpose.amount, asset: this.config.token.asset } };
  }

  /** The chain, the token, the escrow's gas and its solvency, asked at most every HEALTH_TTL_MS. */
  health(): Promise<EvmHealth> {
    const now = Date.now();
    if (!this.lastHealth || now - this.lastHealth.at > HEALTH_TTL_MS) {
      const health = this.judgeHealth();
      this.lastHealth = { at: now, health };
      // Only the newest judgement says whether the rail is ready: an older one may end after it.
      void health.then((judged) => {
        if (this.lastHealth?.health === health) this.readyNow = railReady(judged);
      });
    }
    return this.lastHealth.health;
  }

  /** The settled collect of `collectKey`, if there is one (an outcome the chain cannot tell yet is `rail_failure`). */
  collected(collectKey: string): Promise<WalletTx | undefined> {
    return asRailError(() => this.settledCollect(collectKey));
  }

  private async settledCollect(collectKey: string): Promise<WalletTx | undefined> {
    const earlier = (await this.wallet.claimed(collectKey)).filter((tx) => tx.purpose.kind === 'collect');
    for (const tx of [...earlier].reverse()) {
      const outcome = await this.wallet.outcome(tx, COLLECT_WAIT_MS);
      if (outcome === 'success') return tx;
      if (outcome === undefined) throw ambiguous();
    }
    return undefined;
  }

  private async settledOrThrow(tx: WalletTx, waitMs: number): Promise<WalletTx> {
    const outcome = await this.wallet.outcome(tx, waitMs).catch((error: unknown) => {
      console.error(`reading the receipt of ${tx.hash} failed:`, shortError(error));
      return undefined;
    });
    if (outcome === 'success') return tx;
    if (outcome === 'reverted') throw new RailError('payment_reverted', `transaction ${tx.hash} reverted`);
    throw ambiguous();
  }

  /** What a payer signed must pay exactly the amount to escrow, and stay valid while it settles. */
  private checkTerms({ authorization: a }: SignedAuthorization, amount: bigint): void {
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (a.to !== this.address) throw new RailError('wrong_recipient', `the authorization pays ${a.to}, not the escrow ${this.address}`);
    if (a.value !== amount) throw new RailError('wrong_amount', `the authorization pays ${a.value}, the requirement is exactly ${amount}`);
    if (a.validBefore < now + VALIDITY_MARGIN_S) throw new RailError('expired', 'the authorization has expired (or expires within 6 s)');
    if (a.validAfter > now) throw new RailError('expired', 'the authorization is not valid yet');
  }

  /** Precise refusals the chain can tell before anything is sent: a spent authorization, a payer short of funds. */
  private async checkChain({ authorization: a }: SignedAuthorization): Promise<void> {
    const token = { address: this.config.token.address, abi: eip3009TokenAbi } as const;
    const [spent, balance] = await Promise.all([
      this.reader.readContract({ ...token, functionName: 'authorizationState', args: [a.from, a.nonce] }),
      this.reader.readContract({ ...token, functionName: 'balanceOf', args: [a.from] }),
    ]).catch((error: unknown) => {
      throw new RailError('rail_failure', `the chain does not answer: ${shortError(error)}`);
    });
    if (spent) throw new RailError('proof_already_used', 'the token has already used this authorization');
    if (balance < a.value) throw new RailError('insufficient_funds', `${a.from} holds ${balance}, needs ${a.value}`);
  }

  private async payeeAddress(rail: string, request: PayoutRequest): Promise<Address | undefined> {
    if (request.reverses !== undefined) {
      const reversed = await this.wallet.recorded(request.reverses);
      if (reversed?.purpose.kind !== 'collect') throw new RailError('rail_failure', `the collect ${request.reverses} to pay back is not in the escrow's log`);
      return reversed.purpose.payer;
    }
    const bound = await this.boundAddressOf(rail, request.payee);
    if (bound) return bound as Address;
    const paidIn = [...(await this.wallet.collectsOf(rail, request.payee))].reverse();
    const samePact = paidIn.filter((tx) => tx.purpose.pactId === request.pactId);
    for (const tx of [...samePact, ...paidIn]) {
      if (tx.purpose.kind === 'collect' && (await this.wallet.receiptOutcome(tx)) === 'success') return tx.purpose.payer;
    }
    return undefined;
  }

  private async judgeHealth(): Promise<EvmHealth> {
    const { token, chainId, minGasWei } = this.config;
    const tokenCall = { address: token.address, abi: eip3009TokenAbi } as const;
    const unsettled = this.wallet.unsettled();
    const stalled = unsettled.oldestMs > STALLED_AFTER_MS;
    const common = {
      chainId,
      asset: token.asset,
      token: token.address,
      escrow: this.address,
      payoutsWaitingForAddress: this.waitingForAddress.size,
      unsettledTransactions: { count: unsettled.count, oldestSeconds: Math.floor(unsettled.oldestMs / 1000), stalled },
    };
    // Collects as booked before the balance is read, payouts as booked after it, their receipts read: a
    // transaction mined as the balance is read can then only make escrow look richer, by its amount, until its
    // receipt is read here, never short (which refuses new pacts). See docs/ARCHITECTURE.md, Liabilities.
    const { collected } = this.wallet.books();
    try {
      const [actualChainId, code, gas, balance] = await withTimeout(
        Promise.all([
          this.reader.getChainId(),
          this.reader.getCode({ address: token.address }),
          this.reader.getBalance({ address: this.address }),
          this.reader.readContract({ ...tokenCall, functionName: 'balanceOf', args: [this.address] }),
        ]),
        CHAIN_ANSWER_MS,
      );
      const live = actualChainId === chainId && code !== undefined && code !== '0x';
      // A payout whose receipt cannot be read now stays owed: the rail looks no richer for it, and no less live.
      await withTimeout(this.wallet.readPayoutOutcomes(PAYOUTS_READ), CHAIN_ANSWER_MS).catch(() => undefined);
      const liabilities = collected - this.wallet.books().paid;
      return {
        ...common,
        live,
        solvency: { ok: balance >= liabilities, balance: balance.toString(), liabilities: liabilities.toString() },
        gas: { ok: gas >= minGasWei, balance: gas.toString(), minimum: minGasWei.toString() },
        // A transaction unmined for long holds every later nonce: nothing new should wait behind it.
        payoutsReady: live && gas >= minGasWei && !stalled,
      };
    } catch (error) {
      const liabilities = this.wallet.liabilities().toString();
      return { ...common, live: false, problem: `the chain does not answer: ${shortError(error)}`, solvency: { ok: false, liabilities }, payoutsReady: false };
    }
  }
}

export type EvmHealth = RailHealth & { chainId: number; escrow: Address };

const ambiguous = () => new RailError('rail_failure', 'the payment was sent but its outcome is not known yet; retry with the same proof');
const proofUsed = () => new RailError('proof_already_used', 'this authorization paid for another funding; sign a new one');

/** Runs `work`; what fails there other than a RailError (the chain, NATS) is `rail_failure`, its first line only (viem's errors carry the request). */
async function asRailError<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof RailError) throw error;
    throw new RailError('rail_failure', `the rail could not answer now: ${shortError(error)}`);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  return Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms).unref())]);
}
