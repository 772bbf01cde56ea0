import { keccak256, TransactionReceiptNotFoundError, type Address, type Hex } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';
import { ExpectedSequenceMismatch } from '../../actors/stream-journal.js';
import { crashPoint } from '../../runtime/crash-points.js';
import type { ChainReader } from './chain.js';
import type { TxPurpose, WalletLog, WalletTx } from './wallet-log.js';

export type TxOutcome = 'success' | 'reverted';

/** A contract call the wallet signs: the token's `transfer` or `transferWithAuthorization`. */
export interface ContractCall {
  to: Address;
  data: Hex;
}

const RESEND_EVERY_MS = 5_000;
/**
 * EIP-1559 fees are fixed at signing: the cap is this many times what the node suggests, so a rising base fee
 * does not strand the nonce (only the base fee and the tip are paid). A legacy gas price is paid in full: kept.
 */
const FEE_CAP_FACTOR = 3n;

/** What a transaction pays for: a collect, its funding round; a payout, its payout key. A claim is paid once. */
export const claimOf = (tx: Pick<WalletTx, 'key' | 'purpose'>): string => (tx.purpose.kind === 'collect' ? tx.purpose.collectKey : tx.key);

/** The key (an authorization) is already spent on another claim by a transaction that succeeded or may still. */
export class KeySpentElsewhere extends Error {}

/** The node says the call would revert (gas estimation failed): nothing was recorded. */
export class WouldRevert extends Error {}

/**
 * The custodial escrow wallet: one nonce queue for every transaction it signs (collect settlements and
 * payouts of both EVM rails). Each transaction is signed locally, recorded in the wallet log and only then
 * broadcast, so a crash, a retry or another node sends the very same bytes again, never a second payment.
 * Outcomes are read from the chain's receipts; the log holds no status.
 *
 * The wallet's key must not sign anywhere else: a nonce taken by a transaction this log does not know leaves
 * the recorded one unmined for good (it is reported, never replaced).
 */
export class EscrowWallet {
  private seq = 0;
  private readonly txs: WalletTx[] = [];
  private readonly byKey = new Map<string, WalletTx[]>();
  private readonly byClaim = new Map<string, WalletTx[]>();
  private readonly byHash = new Map<string, WalletTx>();
  /** Collects by rail and party (`collectsOf`): where a payout without a bound address goes. */
  private readonly collectsByPayer = new Map<string, WalletTx[]>();
  /** The transactions without a known outcome, in log order: what is sent again, and what `unsettled` counts. */
  private readonly unknown = new Map<Hex, WalletTx>();
  /** When this process first counted each transaction without a receipt (a stalled nonce holds all later ones). */
  private readonly unsettledSince = new Map<Hex, number>();
  private catchingUp: Promise<void> | undefined;
  private readonly outcomes = new Map<Hex, TxOutcome>();
  /** What successful collects took in and successful payouts paid, added up as their outcomes become known. */
  private readonly totals = { collected: 0n, paid: 0n };
  private queue: Promise<unknown> = Promise.resolve();
  private resender: NodeJS.Timeout | undefined;

  private constructor(
    private readonly account: PrivateKeyAccount,
    private readonly reader: ChainReader,
    private readonly log: WalletLog,
  ) {}

  static async open(account: PrivateKeyAccount, reader: ChainReader, log: WalletLog): Promise<EscrowWallet> {
    const wallet = new EscrowWallet(account, reader, log);
    await wallet.catchUp();
    wallet.resender = setInterval(() => void wallet.resendUnsettled(), RESEND_EVERY_MS).unref();
    void wallet.resendUnsettled();
    return wallet;
  }

  get address(): Address {
    return this.account.address;
  }

  stop(): void {
    clearInterval(this.resender);
  }

  /**
   * Pays `purpose`'s claim with `call`, spending `key`: the transaction recorded for that claim before if it
   * succeeded or may still; else, unless `key` is spent on another claim (`KeySpentElsewhere`), a new one,
   * recorded and then broadcast. Rejects with `WouldRevert`, recording nothing, when the node says `call` would
   * revert. Both rules are judged on the whole log at the moment of recording: transactions are signed one at
   * a time in this process, and other nodes are kept out by the log's compare-and-set.
   */
  send(key: string, call: ContractCall, purpose: TxPurpose): Promise<WalletTx> {
    const sent = this.queue.then(() => this.record(key, call, purpose));
    this.queue = sent.catch(() => undefined);
    return sent;
  }

  /** What became of `tx`: waits up to `timeoutMs` for its receipt (sending it again once if the node lacks it); undefined if none came. */
  async outcome(tx: WalletTx, timeoutMs: number): Promise<TxOutcome | undefined> {
    const deadline = Date.now() + timeoutMs;
    let resent = false;
    for (;;) {
      const known = await this.receiptOutcome(tx);
      if (known) return known;
      if (!resent) {
        await this.broadcast(tx);
        resent = true;
      }
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) => setTimeout(resolve, this.reader.pollingInterval));
    }
  }

  /** Every transaction recorded under `key`, oldest first (after reading what other nodes recorded). */
  async attempts(key: string): Promise<readonly WalletTx[]> {
    await this.catchUp();
    return this.byKey.get(key) ?? [];
  }

  /** Every recorded transaction, in nonce order (after reading what other nodes recorded). */
  async transactions(): Promise<readonly WalletTx[]> {
    await this.catchUp();
    return this.txs;
  }

  /** Every transaction recorded for `claim` (a collect key, or a payout's key), oldest first. */
  async claimed(claim: string): Promise<readonly WalletTx[]> {
    await this.catchUp();
    return this.byClaim.get(claim) ?? [];
  }

  /** The recorded transaction with hash `hash`. */
  async recorded(hash: string): Promise<WalletTx | undefined> {
    await this.catchUp();
    return this.byHash.get(hash);
  }

  /** The collects `party` paid on `rail`, oldest first. */
  async collectsOf(rail: string, party: string): Promise<readonly WalletTx[]> {
    await this.catchUp();
    return this.collectsByPayer.get(payerKey(rail, party)) ?? [];
  }

  /** What escrow owes: every successful collect less every successful payout (both rails), in token units. */
  liabilities(): bigint {
    return this.totals.collected - this.totals.paid;
  }

  /** What successful collects took in and successful payouts paid (both rails), as far as outcomes are known. */
  books(): { collected: bigint; paid: bigint } {
    return { ...this.totals };
  }

  /**
   * Takes in what the log holds (other nodes' transactions too) and reads the receipts of the newest `most`
   * payouts without a known outcome: what has left escrow is then booked.
   */
  async readPayoutOutcomes(most: number): Promise<void> {
    await this.catchingUp?.catch(() => undefined); // a read under way may have been answered before now
    await this.catchUp();
    const payouts = [...this.unknown.values()].filter((tx) => tx.purpose.kind === 'payout').slice(-most);
    await Promise.allSettled(payouts.map((tx) => this.receiptOutcome(tx))); // one not read stays owed
  }

  /** Recorded transactions with no receipt seen yet (sent, or recorded just before a crash), and how long the oldest has waited. */
  unsettled(): { count: number; oldestMs: number } {
    const now = Date.now();
    let oldest = now;
    for (const hash of this.unknown.keys()) {
      const since = this.unsettledSince.get(hash) ?? now;
      this.unsettledSince.set(hash, since);
      oldest = Math.min(oldest, since);
    }
    return { count: this.unknown.size, oldestMs: now - oldest };
  }

  /** The latest transaction of `txs` that succeeded or may still; undefined when all reverted. */
  async live(txs: readonly WalletTx[]): Promise<WalletTx | undefined> {
    for (const tx of [...txs].reverse()) if ((await this.receiptOutcome(tx)) !== 'reverted') return tx;
    return undefined;
  }

  private async record(key: string, call: ContractCall, purpose: TxPurpose): Promise<WalletTx> {
    const claim = claimOf({ key, purpose });
    for (;;) {
      await this.catchUp();
      // The rules are judged on the log up to `seen`, and the append expects exactly that log: an entry another
      // call adopts meanwhile (any read catches up) makes it a mismatch, and the rules are judged again.
      const seen = this.seq;
      const answer = await this.live(this.byClaim.get(claim) ?? []);
      if (answer) return answer;
      const attempts = this.byKey.get(key) ?? [];
      if (await this.live(attempts)) throw new KeySpentElsewhere(`${key} paid for another claim`);
      const tx = await this.sign(key, attempts.length, call, purpose);
      try {
        this.adopt(await this.log.append(tx, seen), tx);
      } catch (error) {
        if (error instanceof ExpectedSequenceMismatch) continue; // another node signed that nonce: read its record, sign again
        throw error;
      }
      crashPoint(`${purpose.kind}-recorded`); // recorded, never sent
      await this.broadcast(tx);
      crashPoint(`${purpose.kind}-broadcast`); // sent, its outcome never told
      return tx;
    }
  }

  private async sign(key: string, attempt: number, call: ContractCall, purpose: TxPurpose): Promise<WalletTx> {
    const recorded = (this.txs.at(-1)?.nonce ?? -1) + 1;
    const onChain = await this.reader.getTransactionCount({ address: this.address, blockTag: 'pending' });
    const nonce = Math.max(recorded, onChain);
    // Gas is estimated without the nonce: a node may hold an estimate for a nonce ahead of what it has seen
    // (another node's recorded transaction not yet broadcast), and the estimate does not depend on it.
    const prepared = await this.reader
      .prepareTransactionRequest({ account: this.account, chain: this.reader.chain, to: call.to, data: call.data, parameters: ['chainId', 'fees', 'gas', 'type'] })
      .catch((error: unknown) => {
        throw /revert|gas required exceeds/i.test(String(error)) ? new WouldRevert(shortError(error)) : error;
      });
    const request = { ...prepared, nonce };
    if (request.maxFeePerGas !== undefined) request.maxFeePerGas *= FEE_CAP_FACTOR;
    const raw = await this.account.signTransaction(request as never);
    return { key, attempt, nonce, hash: keccak256(raw), raw, purpose };
  }

  /** Takes an entry of the log in; one already taken (read twice, or appended here and read) is skipped. */
  private adopt(seq: number, tx: WalletTx): void {
    if (seq <= this.seq) return;
    this.seq = seq;
    this.txs.push(tx);
    this.byHash.set(tx.hash, tx);
    listIn(this.byKey, tx.key, tx);
    listIn(this.byClaim, claimOf(tx), tx);
    if (tx.purpose.kind === 'collect') listIn(this.collectsByPayer, payerKey(tx.purpose.rail, tx.purpose.party), tx);
    const outcome = this.outcomes.get(tx.hash);
    if (outcome) this.count(tx, outcome);
    else this.unknown.set(tx.hash, tx);
  }

  /** Books the outcome of an adopted transaction, once. */
  private count(tx: WalletTx, outcome: TxOutcome): void {
    this.unknown.delete(tx.hash);
    this.unsettledSince.delete(tx.hash);
    if (outcome === 'success') this.totals[tx.purpose.kind === 'collect' ? 'collected' : 'paid'] += BigInt(tx.purpose.amount);
  }

  /** Reads what the log holds after what this wallet has; callers at the same time share one read. */
  private catchUp(): Promise<void> {
    this.catchingUp ??= (async () => {
      try {
        for (const { seq, value } of await this.log.entriesAfter(this.address, this.seq)) this.adopt(seq, value);
      } finally {
        this.catchingUp = undefined;
      }
    })();
    return this.catchingUp;
  }

  /** The receipt's outcome, kept once known; undefined while the chain has none. */
  async receiptOutcome(tx: WalletTx): Promise<TxOutcome | undefined> {
    const known = this.outcomes.get(tx.hash);
    if (known) return known;
    try {
      const receipt = await this.reader.getTransactionReceipt({ hash: tx.hash });
      const outcome = receipt.status === 'success' ? 'success' : 'reverted';
      if (this.outcomes.has(tx.hash)) return outcome; // another read of the same receipt got there first
      this.outcomes.set(tx.hash, outcome);
      const adopted = this.byHash.get(tx.hash);
      if (adopted) this.count(adopted, outcome); // one not adopted yet is counted when it is
      return outcome;
    } catch (error) {
      if (error instanceof TransactionReceiptNotFoundError) return undefined;
      throw error;
    }
  }

  /** Sends the recorded bytes; a node that has them already, or mined them, says so, which is no failure. */
  private async broadcast(tx: WalletTx): Promise<void> {
    try {
      await this.reader.sendRawTransaction({ serializedTransaction: tx.raw });
    } catch (error) {
      if (!/already known|known transaction|nonce too low|already imported|already in the tx pool/i.test(String(error))) {
        console.error(`broadcasting ${tx.key} (nonce ${tx.nonce}) failed; it is sent again later:`, shortError(error));
      }
    }
  }

  /** Sends again every recorded transaction with no receipt: a later nonce waits on the earlier ones. */
  private async resendUnsettled(): Promise<void> {
    try {
      await this.catchUp();
      for (const tx of [...this.unknown.values()]) if (!(await this.receiptOutcome(tx))) await this.broadcast(tx);
    } catch (error) {
      console.error('resending escrow transactions failed; the next pass tries again:', shortError(error));
    }
  }
}

function listIn<K>(index: Map<K, WalletTx[]>, id: K, tx: WalletTx): void {
  const list = index.get(id);
  if (list) list.push(tx);
  else index.set(id, [tx]);
}

const payerKey = (rail: string, party: string) => `${rail} ${party}`;

/** viem's errors carry the request (a signed transaction) in their text: only the first line is logged. */
export const shortError = (error: unknown) => String(error).split('\n')[0];
