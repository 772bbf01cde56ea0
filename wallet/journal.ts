import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from '../actors/acked-publisher.js';
import { messageObject, StreamJournal } from '../actors/stream-journal.js';
import { WALLET_JOURNAL_STREAM, walletJournalSubject } from '../actors/subjects.js';
import type { WalletEvent } from '../machines/wallet/events.js';

/** One applied command of a wallet: its event and the wallet's version after it. */
export interface WalletEntry {
  walletId: string;
  version: number;
  event: WalletEvent;
}

export function decodeEntry(data: Uint8Array, subject: string): WalletEntry | undefined {
  const value = messageObject<WalletEntry>(data);
  const wellShaped =
    value !== undefined && typeof value.walletId === 'string' && Number.isSafeInteger(value.version) && typeof value.event === 'object' && value.event !== null &&
    walletJournalSubject(value.walletId) === subject;
  return wellShaped ? (value as WalletEntry) : undefined;
}

/** The wallets' source of truth (`PACT_WALLET_JOURNAL`): a subject per wallet, appended compare-and-set. */
export class WalletJournal extends StreamJournal<WalletEntry> {
  constructor(publisher: Publisher, jsm: JetStreamManager) {
    super(publisher, jsm, {
      stream: WALLET_JOURNAL_STREAM,
      subjectOf: walletJournalSubject,
      idOf: (entry) => entry.walletId,
      messageIdOf: (entry) => `${entry.walletId}:${entry.version}`,
      decode: decodeEntry,
    });
  }
}
