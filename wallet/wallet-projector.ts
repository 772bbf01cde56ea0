import type { Nats } from '../actors/nats.js';
import { WALLET_JOURNAL_STREAM } from '../actors/subjects.js';
import { BatchedFollower } from '../projection/batched-follower.js';
import type { JournalMessage } from '../projection/journal-follower.js';
import { decodeEntry, type WalletEntry } from './journal.js';
import type { WalletReadModel } from './read-model.js';

/**
 * Keeps the wallets' read model from their journal, in stream order and in batches, on every node: whatever
 * node wrote a wallet, this one's ledger pages, expiring holds and owed credits follow.
 */
export class WalletProjector {
  private readonly feed: BatchedFollower;

  constructor(
    private readonly nats: Nats,
    private readonly readModel: WalletReadModel,
    nodeId: string,
  ) {
    this.feed = new BatchedFollower(nats, {
      stream: WALLET_JOURNAL_STREAM,
      consumerName: `wallet-projector-${nodeId}`,
      what: 'the wallet projector',
      write: (batch) => this.write(batch),
    });
  }

  /** Catches up with the wallets' journal, then keeps following it. */
  async start(): Promise<void> {
    await this.readModel.open((await this.nats.jsm.streams.info(WALLET_JOURNAL_STREAM)).created);
    await this.feed.start(await this.readModel.reachedSeq());
  }

  stop(): Promise<void> {
    return this.feed.stop();
  }

  /** Resolves once the read model holds journal position `seq`, or after `timeoutMs` when one is given. */
  reached(seq: number, timeoutMs?: number): Promise<void> {
    return this.feed.reached(seq, timeoutMs);
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
    await this.readModel.putAll(entries, batch.at(-1)!.seq);
  }
}
