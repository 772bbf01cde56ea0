import type { Money } from '../../protocol/money.js';
import type { PartyId } from '../../protocol/party.js';
import type { JsonLevel } from '../../storage/level.js';
import {
  RailError,
  type CollectRequest,
  type PayoutPurpose,
  type PayoutRequest,
  type Rail,
  type RailHealth,
  type RailReceipt,
  type Requirement,
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

/**
 * A ledger inside the server that stands in for a payment network. It is kept in its own LevelDB
 * (like an outside network, it is not part of the service's rebuildable state). Every operation is
 * keyed: a key applied once is never applied again, whatever the retries.
 */
export class MockRail implements Rail {
  readonly name = 'mock' as const;
  readonly escrowAccount = MOCK_ESCROW;
  private readonly failures = new Set<Failure>();
  private serial: Promise<unknown> = Promise.resolve();
  private opCount = 0;

  constructor(
    private readonly db: JsonLevel,
    private readonly defaultBalance: bigint,
  ) {}

  requirement(_payer: PartyId, amount: Money): Requirement {
    return {
      rail: 'mock',
      amount,
      asset: amount.asset,
      payTo: MOCK_ESCROW,
      railData: { scheme: 'mock', payTo: MOCK_ESCROW, amount: amount.amount, asset: amount.asset },
    };
  }

  collect(request: CollectRequest): Promise<RailReceipt> {
    return this.exclusive(async () => {
      const done = await this.operation(request.key);
      if (done) return { key: request.key, ref: done.ref };
      if (!isMockProof(request.proof)) throw new RailError('invalid_proof', 'the mock rail takes {"scheme":"mock"}');
      this.failIfInjected('collect');
      return this.transfer(request.key, 'collect', request.payer, MOCK_ESCROW, request.amount);
    });
  }

  payout(request: PayoutRequest): Promise<RailReceipt> {
    return this.exclusive(async () => {
      const done = await this.operation(request.key);
      if (done) return { key: request.key, ref: done.ref };
      this.failIfInjected(request.purpose);
      return this.transfer(request.key, 'payout', MOCK_ESCROW, request.payee, request.amount);
    });
  }

  async collected(key: string): Promise<RailReceipt | undefined> {
    const done = await this.operation(key);
    return done?.kind === 'collect' ? { key, ref: done.ref } : undefined;
  }

  async health(): Promise<RailHealth> {
    return { live: true, solvency: { ok: (await this.balance(MOCK_ESCROW)) >= 0n } };
  }

  /** Test hook: the next operation of that kind fails once. */
  failNext(failure: Failure): void {
    this.failures.add(failure);
  }

  /** Test hook: sets balances exactly. */
  setBalances(balances: Record<string, string>): Promise<void> {
    return this.exclusive(() =>
      this.db.batch(Object.entries(balances).map(([account, amount]) => ({ type: 'put', key: balanceKey(account), value: amount }))),
    );
  }

  async balances(): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    for await (const [key, value] of this.db.iterator({ gt: 'bal!', lt: 'bal!\uffff' })) {
      out[key.slice(4)] = value as string;
    }
    return out;
  }

  async operations(): Promise<(Operation & { key: string })[]> {
    const out: (Operation & { key: string })[] = [];
    for await (const [key, value] of this.db.iterator({ gt: 'op!', lt: 'op!\uffff' })) {
      out.push({ key: key.slice(3), ...(value as Operation) });
    }
    return out;
  }

  private failIfInjected(failure: Failure): void {
    if (this.failures.delete(failure)) throw new RailError('rail_failure', `injected ${failure} failure`);
  }

  private async transfer(key: string, kind: Operation['kind'], from: string, to: string, amount: Money) {
    const value = BigInt(amount.amount);
    const fromBalance = await this.balance(from);
    if (from !== MOCK_ESCROW && fromBalance < value) {
      throw new RailError('insufficient_funds', `${from} holds ${fromBalance}, needs ${value}`);
    }
    const ref = `mock_${Date.now().toString(36)}_${(this.opCount++).toString(36)}`;
    const op: Operation = { kind, ref, from, to, amount: amount.amount, asset: amount.asset };
    await this.db.batch([
      { type: 'put', key: balanceKey(from), value: (fromBalance - value).toString() },
      { type: 'put', key: balanceKey(to), value: ((await this.balance(to)) + value).toString() },
      { type: 'put', key: `op!${key}`, value: op },
    ]);
    return { key, ref };
  }

  private async balance(account: string): Promise<bigint> {
    const stored = (await this.db.get(balanceKey(account))) as string | undefined;
    if (stored !== undefined) return BigInt(stored);
    return account === MOCK_ESCROW ? 0n : this.defaultBalance;
  }

  private async operation(key: string): Promise<Operation | undefined> {
    return (await this.db.get(`op!${key}`)) as Operation | undefined;
  }

  /** One ledger change at a time: balances are read, then written. */
  private exclusive<T>(work: () => Promise<T>): Promise<T> {
    const run = this.serial.then(work, work);
    this.serial = run.catch(() => undefined);
    return run;
  }
}

const balanceKey = (account: string) => `bal!${account}`;

function isMockProof(proof: unknown): boolean {
  return typeof proof === 'object' && proof !== null && (proof as { scheme?: unknown }).scheme === 'mock';
}
