import type { Nats } from '../actors/nats.js';
import { WALLET_JOURNAL_STREAM } from '../actors/subjects.js';
import { JournalFollower, MAX_BACKLOG, type JournalMessage } from '../projection/journal-follower.js';
import { PositionWaiters } from '../projection/position-waiters.js';
import { decodeEntry, type WalletEntry } from './journal.js';
import type { WalletReadModel } from './read-model.js';

const RETRY_MS = 1_000;

/**
 * Keeps the wallets' read model from their journal, in stream order and in batches, on every node: whatever
 * node wrote a wallet, this one's ledger pages, expiring holds and owed credits follow.
 */
export class WalletProjector {
  private readonly follower: JournalFollower;
  private readonly waiters = new PositionWaiters();
  private arrivals: JournalMessage[] = [];
  private writing: Promise<void> | undefined;
  private stopped = false;

  constructor(
    private readonly nats: Nats,
    private readonly readModel: WalletReadModel,
    nodeId: string,
  ) {
    this.follower = new JournalFollower(nats, WALLET_JOURNAL_STREAM, `wallet-projector-${nodeId}`, (message) => this.arrive(message));
  }

  /** Catches up with the wallets' journal, then keeps following it. */
  async start(): Promise<void> {
    await this.readModel.open((await this.nats.jsm.streams.info(WALLET_JOURNAL_STREAM)).created);
    const seq = await this.readModel.reachedSeq();
    this.waiters.reach(seq);
    await this.reached(await this.follower.start(seq));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.follower.stop();
    await this.writing;
  }

  /** Resolves once the read model holds journal position `seq`, or after `timeoutMs` when one is given. */
  reached(seq: number, timeoutMs?: number): Promise<void> {
    return this.waiters.reached(seq, timeoutMs);
  }

  /** Resolves once the read model holds everything the journal held when asked (a keeper's pass sees it all). */
  async current(timeoutMs: number): Promise<void> {
    const { last_seq: last } = (await this.nats.jsm.streams.info(WALLET_JOURNAL_STREAM)).state;
    await this.reached(last, timeoutMs);
  }

  private arrive(message: JournalMessage): Promise<void> | undefined {
    this.arrivals.push(message);
    if (!this.writing && !this.stopped) this.writing = this.writeArrivals().finally(() => (this.writing = undefined));
    return this.arrivals.length >= MAX_BACKLOG ? this.writing : undefined;
  }

  /** Writes what arrived while the previous batch was being written, as one batch; a failed write is tried again. */
  private async writeArrivals(): Promise<void> {
    while (this.arrivals.length > 0 && !this.stopped) {
      const batch = this.arrivals;
      this.arrivals = [];
      const entries: WalletEntry[] = [];
      for (const message of batch) {
        const entry = decodeEntry(message.data, message.subject);
        if (entry) entries.push(entry);
        else console.error(`wallet projector skips message ${message.seq}: not an entry of its subject's wallet`);
      }
      const reached = batch.at(-1)!.seq;
      try {
        await this.readModel.putAll(entries, reached);
      } catch (error) {
        console.error('wallet projector could not write; retrying in a second:', String(error));
        this.arrivals = [...batch, ...this.arrivals];
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        continue;
      }
      this.waiters.reach(reached);
    }
  }
}
