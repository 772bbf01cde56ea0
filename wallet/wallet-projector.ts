import type { Nats } from '../actors/nats.js';
import { WALLET_JOURNAL_STREAM } from '../actors/subjects.js';
import { ArrivalBatches } from '../projection/arrival-batches.js';
import { JournalFollower, type JournalMessage } from '../projection/journal-follower.js';
import { PositionWaiters } from '../projection/position-waiters.js';
import { decodeEntry, type WalletEntry } from './journal.js';
import type { WalletReadModel } from './read-model.js';

/**
 * Keeps the wallets' read model from their journal, in stream order and in batches, on every node: whatever
 * node wrote a wallet, this one's ledger pages, expiring holds and owed credits follow.
 */
export class WalletProjector {
  private readonly follower: JournalFollower;
  private readonly waiters = new PositionWaiters();
  private readonly batches = new ArrivalBatches('the wallet projector', (batch) => this.write(batch));

  constructor(
    private readonly nats: Nats,
    private readonly readModel: WalletReadModel,
    nodeId: string,
  ) {
    this.follower = new JournalFollower(nats, WALLET_JOURNAL_STREAM, `wallet-projector-${nodeId}`, (message) => this.batches.arrive(message));
  }

  /** Catches up with the wallets' journal, then keeps following it. */
  async start(): Promise<void> {
    await this.readModel.open((await this.nats.jsm.streams.info(WALLET_JOURNAL_STREAM)).created);
    const seq = await this.readModel.reachedSeq();
    this.waiters.reach(seq);
    await this.reached(await this.follower.start(seq));
  }

  async stop(): Promise<void> {
    this.batches.halt();
    await this.follower.stop();
    await this.batches.finished();
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

  private async write(batch: JournalMessage[]): Promise<void> {
    const entries: WalletEntry[] = [];
    for (const message of batch) {
      const entry = decodeEntry(message.data, message.subject);
      if (entry) entries.push(entry);
      else console.error(`wallet projector skips message ${message.seq}: not an entry of its subject's wallet`);
    }
    const reached = batch.at(-1)!.seq;
    await this.readModel.putAll(entries, reached);
    this.waiters.reach(reached);
  }
}
