import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from '../../actors/acked-publisher.js';
import type { Address, Hex } from 'viem';
import { messageObject, StreamJournal } from '../../actors/stream-journal.js';
import { WALLET_STREAM, walletTxSubject } from '../../actors/subjects.js';
import type { PartyId } from '../../protocol/party.js';

/** What a transaction of the escrow wallet is for: the books (liabilities, reconciliation) are read from it. */
export type TxPurpose =
  | { kind: 'collect'; rail: string; collectKey: string; pactId: string; party: PartyId; payer: Address; amount: string }
  | { kind: 'payout'; rail: string; pactId: string; party: PartyId; to: Address; amount: string };

/**
 * One signed transaction of the escrow wallet, recorded before it is broadcast: after a crash the same bytes
 * are sent again, and the nonce they hold makes a second payment impossible.
 */
export interface WalletTx {
  /** What the transaction does, one per intent: `collect:<payer>:<authorization nonce>` or `payout:<payout key>`. */
  key: string;
  /** 0 for the first transaction under `key`; another is signed only after every earlier one reverted. */
  attempt: number;
  nonce: number;
  hash: Hex;
  raw: Hex;
  purpose: TxPurpose;
}

function decodeTx(data: Uint8Array, subject: string, wallet: Address): WalletTx | undefined {
  const value = messageObject<WalletTx>(data);
  const wellShaped =
    value !== undefined && typeof value.key === 'string' && Number.isSafeInteger(value.nonce) && Number.isSafeInteger(value.attempt) &&
    typeof value.hash === 'string' && typeof value.raw === 'string' && typeof value.purpose === 'object' && subject === walletTxSubject(wallet);
  return wellShaped ? (value as WalletTx) : undefined;
}

/**
 * The escrow wallet's transactions on NATS (`PACT_WALLETS`): one subject per wallet, appended with
 * compare-and-set on its last sequence, so every node that pays from the wallet signs each nonce once.
 */
export class WalletLog extends StreamJournal<WalletTx> {
  constructor(publisher: Publisher, jsm: JetStreamManager, readonly wallet: Address) {
    super(publisher, jsm, {
      stream: WALLET_STREAM,
      subjectOf: walletTxSubject,
      idOf: () => wallet,
      messageIdOf: (tx) => `${walletTxSubject(wallet)}:${tx.nonce}`,
      decode: (data, subject) => decodeTx(data, subject, wallet),
    });
  }
}
