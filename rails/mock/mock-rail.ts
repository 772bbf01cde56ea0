import type { Money } from '../../protocol/money.js';
import type { PartyId } from '../../protocol/party.js';
import { BatchWriter } from '../../storage/batch-writer.js';
import type { JsonLevel } from '../../storage/level.js';
import {
  RailError,
  type CollectAt,
  type CollectPlace,
  type CollectRequest,
  type PayoutPurpose,
  type PayoutRequest,
  type Quote,
  type QuoteRequest,
  type Rail,
  type RailHealth,
  type RailReceipt,
} from '../rail.js';

export const MOCK_ESCROW = 'mock:escrow';

type Failure = 'collect' | PayoutPurpose;

interface Operation {
  kind: 'collect' | 'payout';
  ref: string;
  from: string;
  to: string;
  amount: string;
  asset: string;
}

interface Applied {
  operation: Operation;
  /** Settles when the operation is on disk; a receipt is handed out only after that. */
  durable: Promise<void>;
}

/**
 * A ledger inside the server that stands in for a payment network. It lives in memory and is written
 * through to its own LevelDB (like an outside network, it is not part of the service's rebuildable state).
 * Every operation is keyed: a key applied once is never applied again, whatever the retries. Each
 * operation is checked and applied to memory in one synchronous step, so no two can interleave.
 */
export class MockRail implements Rail {
  readonly name = 'mock' as const;
  readonly escrowAccount = MOCK_ESCROW;

  /** The mock moves test balances between names: any printable name up to 128 characters. */
  isAddress(address: string): boolean {
    return /^[\x21-\x7e]{1,128}$/.test(address);
  }

  /** The mock moves any asset. */
  holds(): boolean {
    return true;
  }

  readonly asset = undefined;

  get ready(): boolean {
    return !this.broken;
  }
  private readonly failures = new Set<Failure>();
  private readonly writer: BatchWriter;
  /** The keys of `applied`, in the order this process took them in: the positions of `collects`. */
  private readonly order: string[];
  private opCount = 0;
  private broken = false;

  private constructor(
    db: JsonLevel,
    private readonly defaultBalance: bigint,
    private readonly accounts: Map<string, bigint>,
    private readonly applied: Map<string, Applied>,
  ) {
    this.writer = new BatchWriter(db);
    this.order = [...applied.keys()];
  }

  static async open(db: JsonLevel, defaultBalance: bigint): Promise<MockRail> {
    const accounts = new Map<string, bigint>();
    const applied = new Map<string, Applied>();
    for await (const [key, value] of db.iterator()) {
      if (key.startsWith('bal!')) accounts.set(key.slice(4), BigInt(value as string));
      if (key.startsWith('op!')) applied.set(key.slice(3), { operation: value as Operation, durable: Promise.resolve() });
    }
    return new MockRail(db, defaultBalance, accounts, applied);
  }

  readonly needsRailAddress = false;

  quote({ amount }: QuoteRequest): Quote {
    return {
      requirement: {
        rail: 'mock',
        amount,
        asset: amount.asset,
        payTo: MOCK_ESCROW,
        railData: { scheme: 'mock', payTo: MOCK_ESCROW, amount: amount.amount, asset: amount.asset },
      },
    };
  }

  collect(request: CollectRequest): Promise<RailReceipt> {
    return this.once(request.key, () => {
      if (!isMockProof(request.proof)) throw new RailError('invalid_proof', 'the mock rail takes {"scheme":"mock"}');
      this.failIfInjected('collect');
      return this.transfer(request.key, 'collect', request.payer, MOCK_ESCROW, request.amount);
    });
  }

  async collected(key: string): Promise<RailReceipt | undefined> {
    const done = this.applied.get(key);
    if (done?.operation.kind !== 'collect' || !(await done.durable.then(() => true, () => false))) return undefined;
    return { key, ref: done.operation.ref };
  }

  payout(request: PayoutRequest): Promise<RailReceipt> {
    return this.once(request.key, () => {
      this.failIfInjected(request.purpose);
      return this.transfer(request.key, 'payout', MOCK_ESCROW, request.payee, request.amount);
    });
  }

  /** The ledger's operations in the order this process knows them: its collects, and none at the others. */
  async *collects(from: number): AsyncIterable<CollectAt> {
    for (let position = from; position < this.order.length; position++) yield { position, place: await this.collectAt(position) };
  }

  /** The collect at `position` if it is on disk; one whose write failed never happened as far as a restart can tell. */
  async collectAt(position: number): Promise<CollectPlace> {
    const key = this.order[position];
    const done = key === undefined ? undefined : this.applied.get(key);
    if (done?.operation.kind !== 'collect' || !(await done.durable.then(() => true, () => false))) return 'none';
    const { ref, from, amount, asset } = done.operation;
    return { key: key!, ref, payer: from as PartyId, amount: { amount, asset } };
  }

  async health(): Promise<RailHealth> {
    return { live: !this.broken, solvency: { ok: this.balance(MOCK_ESCROW) >= 0n }, payoutsReady: !this.broken };
  }

  /** Test hook: the next operation of that kind fails once. */
  failNext(failure: Failure): void {
    this.failures.add(failure);
  }

  /** Test hook: sets balances exactly. */
  setBalances(balances: Record<string, string>): Promise<void> {
    for (const [account, amount] of Object.entries(balances)) this.accounts.set(account, BigInt(amount));
    return this.persist(Object.entries(balances).map(([account, amount]) => ({ type: 'put', key: balanceKey(account), value: amount })));
  }

  async balances(): Promise<Record<string, string>> {
    return Object.fromEntries([...this.accounts].map(([account, amount]) => [account, amount.toString()]));
  }

  async operations(): Promise<(Operation & { key: string })[]> {
    return [...this.applied].map(([key, { operation }]) => ({ key, ...operation }));
  }

  /** Applies `apply` under `key` unless that key was applied before; either way, answers once it is durable. */
  private async once(key: string, apply: () => Applied): Promise<RailReceipt> {
    if (this.broken) throw new RailError('rail_failure', 'the mock ledger could not be written; restart the service');
    const done = this.applied.get(key) ?? apply();
    await done.durable;
    return { key, ref: done.operation.ref };
  }

  private failIfInjected(failure: Failure): void {
    if (this.failures.delete(failure)) throw new RailError('rail_failure', `injected ${failure} failure`);
  }

  /** Moves `amount` in memory and records the operation under `key`; the disk write follows in order. */
  private transfer(key: string, kind: Operation['kind'], from: string, to: string, amount: Money): Applied {
    const value = BigInt(amount.amount);
    const fromBalance = this.balance(from);
    if (from !== MOCK_ESCROW && fromBalance < value) {
      throw new RailError('insufficient_funds', `${from} holds ${fromBalance}, needs ${value}`);
    }
    const ref = `mock_${Date.now().toString(36)}_${(this.opCount++).toString(36)}`;
    const operation: Operation = { kind, ref, from, to, amount: amount.amount, asset: amount.asset };
    this.accounts.set(from, fromBalance - value);
    this.accounts.set(to, this.balance(to) + value);
    const durable = this.persist([
      { type: 'put', key: balanceKey(from), value: this.balance(from).toString() },
      { type: 'put', key: balanceKey(to), value: this.balance(to).toString() },
      { type: 'put', key: `op!${key}`, value: operation },
    ]);
    const applied = { operation, durable };
    this.applied.set(key, applied);
    this.order.push(key);
    return applied;
  }

  /**
   * A failed write leaves memory ahead of disk, and later batches would store balances that include it:
   * the ledger then stops taking operations (health says not live) until a restart reloads it from disk.
   */
  private persist(operations: Parameters<BatchWriter['write']>[0]): Promise<void> {
    return this.writer.write(operations).catch((error) => {
      this.broken = true;
      throw error;
    });
  }

  private balance(account: string): bigint {
    return this.accounts.get(account) ?? (account === MOCK_ESCROW ? 0n : this.defaultBalance);
  }
}

const balanceKey = (account: string) => `bal!${account}`;

function isMockProof(proof: unknown): boolean {
  return typeof proof === 'object' && proof !== null && (proof as { scheme?: unknown }).scheme === 'mock';
}
