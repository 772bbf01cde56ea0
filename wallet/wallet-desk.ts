import { ExpectedSequenceMismatch } from '../actors/stream-journal.js';
import type { WalletEvent } from '../machines/wallet/events.js';
import { evolve } from '../machines/wallet/evolve.js';
import type { Wallet } from '../machines/wallet/types.js';
import type { Clock } from '../runtime/clock.js';
import { walletError, type WalletError } from './errors.js';
import type { WalletEntry, WalletJournal } from './journal.js';
import { WALLET_ID } from './secrets.js';

/** A decision on a wallet at `now`: the event to record, or why not. */
export type WalletDecision = (wallet: Wallet, now: number) => WalletEvent | WalletError;

export type WalletOutcome = { wallet: Wallet } | { error: WalletError };

/** Wallets kept in memory at most; the least recently used beyond it are read again from the journal. */
const MAX_WALLETS_IN_MEMORY = 10_000;

/** One wallet's single writer in this process: its copy, its journal position, its mailbox. */
class WalletActor {
  wallet: Wallet | undefined;
  seq = 0;
  private mailbox: Promise<unknown> = Promise.resolve();

  constructor(readonly id: string) {}

  /** Runs `work` after every earlier call on this wallet has finished. */
  serially<T>(work: () => Promise<T>): Promise<T> {
    const done = this.mailbox.then(work);
    this.mailbox = done.catch(() => undefined);
    return done;
  }
}

/**
 * The wallets' write side: each wallet's changes are decided one at a time on its newest state (read from
 * the journal first) and appended compare-and-set on the wallet's subject, so another node writing the same
 * wallet makes this append fail and the decision is taken again on what it wrote. Balances can therefore
 * never be spent twice, here or across nodes.
 */
export class WalletDesk {
  private readonly actors = new Map<string, WalletActor>();

  constructor(
    private readonly journal: WalletJournal,
    private readonly clock: Clock,
  ) {}

  /** Records a new wallet (its id is new: no other writer can hold it). */
  async create(wallet: Wallet): Promise<Wallet> {
    const actor = this.actorOf(wallet.id);
    return actor.serially(async () => {
      const entry: WalletEntry = { walletId: wallet.id, version: wallet.version, event: { type: 'created', at: wallet.createdAt, wallet } };
      actor.seq = await this.journal.append(entry, 0);
      actor.wallet = wallet;
      return wallet;
    });
  }

  /** The wallet as its journal now holds it; undefined when there is none. */
  read(walletId: string): Promise<Wallet | undefined> {
    if (!WALLET_ID.test(walletId)) return Promise.resolve(undefined); // an id names one subject, never a wildcard
    const actor = this.actorOf(walletId);
    return actor.serially(async () => {
      await this.catchUp(actor);
      return actor.wallet;
    });
  }

  /** The wallet's journal position as of the last read or change here (0: none yet): what a read model must reach to show it. */
  knownPosition(walletId: string): number {
    return this.actors.get(walletId)?.seq ?? 0;
  }

  /** Decides on the wallet's newest state and records the event; a lost compare-and-set decides again. */
  change(walletId: string, decide: WalletDecision): Promise<WalletOutcome> {
    if (!WALLET_ID.test(walletId)) return Promise.resolve({ error: walletError('not_found', `no wallet ${walletId}`) });
    const actor = this.actorOf(walletId);
    return actor.serially(async () => {
      for (;;) {
        await this.catchUp(actor);
        const wallet = actor.wallet;
        if (!wallet) return { error: walletError('not_found', `no wallet ${walletId}`) };
        const decided = decide(wallet, this.clock.now());
        if ('error' in decided) return { error: decided };
        const next = evolve(wallet, decided);
        if (!next) return { error: walletError('invalid_request', `${decided.type} is not possible on a ${wallet.status} wallet`) };
        try {
          actor.seq = await this.journal.append({ walletId, version: next.version, event: decided }, actor.seq);
        } catch (error) {
          if (error instanceof ExpectedSequenceMismatch) continue;
          throw error;
        }
        actor.wallet = next;
        return { wallet: next };
      }
    });
  }

  private async catchUp(actor: WalletActor): Promise<void> {
    for (const { seq, value } of await this.journal.entriesAfter(actor.id, actor.seq)) {
      actor.wallet = evolve(actor.wallet, value.event) ?? actor.wallet;
      actor.seq = seq;
    }
  }

  private actorOf(walletId: string): WalletActor {
    let actor = this.actors.get(walletId);
    if (actor) {
      this.actors.delete(walletId); // to the end: most recently used
    } else {
      actor = new WalletActor(walletId);
      if (this.actors.size >= MAX_WALLETS_IN_MEMORY) this.actors.delete(this.actors.keys().next().value as string);
    }
    this.actors.set(walletId, actor);
    return actor;
  }
}
