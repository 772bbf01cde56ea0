import type { Pact, Payout } from '../machines/pact/types.js';
import { RailError, type PayoutPurpose, type Rail } from '../rails/rail.js';
import type { CommandSender } from './command-sender.js';
import type { PaidPayout } from './messages.js';

const RETRY_DELAY_MS = 2_000;
const SCAN_EVERY_MS = 5_000;
const CONCURRENCY = 16;

const purposeOf = (payout: Payout): PayoutPurpose => (payout.kind === 'pot' || payout.kind === 'fee' ? 'release' : 'refund');
const unpaidOf = (pact: Pact) => pact.payouts.filter((p) => p.status !== 'paid');

/** Where the payout worker reads pacts: the node's read model, and whether this node's host holds the pact. */
export interface PayoutSource {
  pact(pactId: string): Promise<Pact | undefined>;
  /** Every pact whose written record has payouts not yet paid. */
  withUnpaidPayouts(): AsyncIterable<string>;
  /** Whether this node's host holds the pact's partition: only its payouts are this node's to execute. */
  mine(pactId: string): boolean;
}

/**
 * Executes the payouts a pact's record holds and has not yet paid, on the pact's rail, keyed per payout,
 * then records the rail references on the pact. It is told of every record with unpaid payouts as the
 * projector writes it, and scans the read model for them at start and every SCAN_EVERY_MS, so a crash
 * anywhere, or a rail that failed, leads to another try; the rail's keys make a retry pay nothing twice.
 *
 * It pays only what the pact's record holds: the journal replayed through the machine. An entry that
 * plans payouts the machine refuses never reaches a record, so it pays nothing.
 */
export class PayoutWorker {
  private readonly queued = new Set<string>();
  private readonly working = new Set<string>();
  /** Pacts whose last try left payouts unpaid (a rail failure, a payee with no address), waiting to try again. */
  private readonly retrying = new Set<string>();
  private scanner: NodeJS.Timeout | undefined;
  private scanning: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly rails: ReadonlyMap<string, Rail>,
    private readonly bus: CommandSender,
    private readonly source: PayoutSource,
  ) {}

  async start(): Promise<void> {
    await this.scan();
    this.scanner = setInterval(() => void this.scan(), SCAN_EVERY_MS);
  }

  stop(): void {
    this.stopped = true;
    clearInterval(this.scanner);
  }

  /** Pacts with payouts waiting to be paid or recorded, known in memory: `at` is always now. */
  get pending(): { count: number; at: number } {
    return { count: new Set([...this.queued, ...this.working, ...this.retrying]).size, at: Date.now() };
  }

  /** A pact's record was written: pays what it holds unpaid. */
  notice(pact: Pact): void {
    if (unpaidOf(pact).length > 0 && this.source.mine(pact.id)) this.enqueue(pact.id);
  }

  private scan(): Promise<void> {
    this.scanning ??= (async () => {
      try {
        for await (const pactId of this.source.withUnpaidPayouts()) if (this.source.mine(pactId)) this.enqueue(pactId);
      } catch (error) {
        console.error('payout scan failed; the next one tries again:', String(error));
      }
    })().finally(() => (this.scanning = undefined));
    return this.scanning;
  }

  private enqueue(pactId: string): void {
    if (this.stopped || this.working.has(pactId)) return;
    this.queued.add(pactId);
    this.next();
  }

  private next(): void {
    while (this.working.size < CONCURRENCY && this.queued.size > 0) {
      const pactId = this.queued.values().next().value as string;
      this.queued.delete(pactId);
      this.working.add(pactId);
      void this.pay(pactId).then((done) => {
        this.working.delete(pactId);
        if (!done) this.retryLater(pactId);
        this.next();
      });
    }
  }

  private retryLater(pactId: string): void {
    this.retrying.add(pactId);
    setTimeout(() => {
      this.retrying.delete(pactId);
      this.enqueue(pactId);
    }, RETRY_DELAY_MS).unref();
  }

  /** Pays the pact's unpaid payouts and records them; resolves to whether nothing is left to do. */
  private async pay(pactId: string): Promise<boolean> {
    try {
      const pact = await this.source.pact(pactId);
      const unpaid = pact ? unpaidOf(pact) : [];
      if (!pact || unpaid.length === 0) return true;
      const rail = this.rails.get(pact.rail);
      if (!rail) throw new Error(`rail ${pact.rail} is not configured`);
      const paid = await this.execute(rail, pact, unpaid);
      if (paid.length > 0) {
        const reply = await this.bus.send(pactId, { type: 'recordPayouts', paid });
        if (!reply.ok) throw new Error(`recording payouts failed: ${reply.error.error}`);
      }
      return paid.length === unpaid.length;
    } catch (error) {
      console.error(`payouts of ${pactId} will be retried:`, String(error));
      return false;
    }
  }

  private async execute(rail: Rail, pact: Pact, unpaid: Payout[]): Promise<PaidPayout[]> {
    const paid: PaidPayout[] = [];
    for (const payout of unpaid) {
      try {
        const receipt = await rail.payout({
          key: payout.key,
          pactId: pact.id,
          payee: payout.party,
          amount: { amount: payout.amount, asset: pact.asset },
          purpose: purposeOf(payout),
        });
        paid.push({ key: payout.key, railRef: receipt.ref });
      } catch (error) {
        // A payee with no address waits quietly (GET /health counts it); anything else is worth a line.
        if (!(error instanceof RailError && error.code === 'no_address')) console.error(`payout ${payout.key} failed:`, String(error));
      }
    }
    return paid;
  }
}
