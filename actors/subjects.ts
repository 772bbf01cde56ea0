import type { HostCommand } from './messages.js';

/** Names on the NATS side. Documented for internal subscribers in docs/NATS.md. */
export const CMD_STREAM = 'PACT_CMD';
export const JOURNAL_STREAM = 'PACT_JOURNAL';
export const LEASE_BUCKET = 'PACT_LEASES';
/** The offers' journal: one subject per offer, appended to like the pacts' (compare-and-set per offer). */
export const OFFER_STREAM = 'PACT_OFFERS';
export const offerSubject = (offerId: string) => `offer.evt.${offerId}`;
export const OFFER_WILDCARD = 'offer.evt.>';
/** Access on invite-mode servers: a subject per party, and one for the operator's address rules. */
export const ACCESS_STREAM = 'PACT_ACCESS';
export const ACCESS_WILDCARD = 'access.>';
export const ACCESS_PARTIES = 'access.party.>';
export const ACCESS_RULES_ID = 'rules';
export const accessSubject = (id: string) => (id === ACCESS_RULES_ID ? 'access.rules' : `access.party.${id}`);
/** Payout addresses the parties bound: a subject per rail and party, first write wins (expected last sequence 0). */
export const RAILS_STREAM = 'PACT_RAILS';
export const RAIL_ADDRESSES = 'rails.address.>';
/** A binding's id: `<rail>.<party>` (rails are lowercase alphanumerics, party ids have no dots). */
export const bindingId = (rail: string, party: string) => `${rail}.${party}`;
export const railAddressSubject = (id: string) => `rails.address.${id}`;
/** The credit rail's collects: a subject per collect key (`:` and `.` spelled `-` and `_`, as subjects cannot hold dots). */
export const CREDIT_HOLDS = 'rails.credit.>';
export const creditHoldSubject = (collectKey: string) => `rails.credit.${collectKey.replaceAll(':', '-').replaceAll('.', '_')}`;
/** Each escrow wallet's transactions, in nonce order, on one subject per wallet address (rails/evm/wallet-log.ts). */
export const WALLET_STREAM = 'PACT_WALLETS';
export const WALLET_TXS = 'wallet.tx.>';
export const walletTxSubject = (address: string) => `wallet.tx.${address.toLowerCase()}`;
/** The wallet service: each wallet's journal (compare-and-set per wallet), its token index, its idempotency records. */
export const WALLET_JOURNAL_STREAM = 'PACT_WALLET_JOURNAL';
export const walletJournalSubject = (walletId: string) => `wallet.evt.${walletId}`;
export const WALLET_TOKENS_STREAM = 'PACT_WALLET_TOKENS';
export const walletTokenSubject = (tokenHash: string) => `wallet.token.${tokenHash}`;
export const WALLET_IDEMPOTENCY_STREAM = 'PACT_WALLET_IDEMPOTENCY';
export const walletIdempotencySubject = (recordId: string) => `wallet.idem.${recordId}`;
/** Each payment authorization the wallet service's payer signs, claimed once (`wallet/payment-claims.ts`). */
export const WALLET_PAYMENTS_STREAM = 'PACT_WALLET_PAYMENTS';
export const walletPaymentSubject = (claimId: string) => `wallet.pay.${claimId}`;
/** Everything the wallet service writes (hosts write it). */
export const WALLET_SUBJECTS = 'wallet.>';
/** The Agent Stream: every event on one subject, kept seven days; the event id is the message id. */
export const EVENT_STREAM = 'PACT_EVENTS';
export const EVENT_SUBJECT = 'stream.evt';

/**
 * Commands travel on a subject per partition and kind, so NATS permissions can say who may send what:
 * gateways send `signed` and `poke`, only the payout worker sends `payouts`, only actor hosts send `accepted`.
 */
export const COMMAND_KINDS = ['signed', 'poke', 'payouts', 'accepted'] as const;
export type CommandKind = (typeof COMMAND_KINDS)[number];

export const commandSubject = (partition: number, kind: CommandKind) => `pact.cmd.${partition}.${kind}`;
export const partitionCommands = (partition: number) => `pact.cmd.${partition}.>`;
/**
 * A pact's journal has a subject per position: the entry that leaves the pact at `nonce` (its creation at 0).
 * Each holds one message, appended only while the subject is empty (docs/ARCHITECTURE.md, "Write path").
 */
export const journalSubject = (pactId: string, nonce: number) => `pact.evt.${pactId}.${nonce}`;
/** Every entry of one pact. */
export const pactJournalSubjects = (pactId: string) => `pact.evt.${pactId}.*`;
export const JOURNAL_WILDCARD = 'pact.evt.>';
const JOURNAL_SUBJECT = /^pact\.evt\.([^.]+)\.(0|[1-9][0-9]*)$/;
/** The pact a journal subject names; undefined for any other subject. */
export const pactIdOfJournalSubject = (subject: string) => JOURNAL_SUBJECT.exec(subject)?.[1];

/** The prefix of every reply inbox a command bus listens on; a host answers nowhere else. */
export const REPLY_PREFIX = '_INBOX_PACT';

export function commandKindOf(command: HostCommand): CommandKind {
  if (command.type === 'poke') return 'poke';
  if (command.type === 'recordPayouts') return 'payouts';
  if (command.type === 'accepted') return 'accepted';
  return 'signed';
}

/** The kind named by a command subject's last token, or undefined for a subject of no known kind. */
export function kindOfSubject(subject: string): CommandKind | undefined {
  const last = subject.slice(subject.lastIndexOf('.') + 1);
  return (COMMAND_KINDS as readonly string[]).includes(last) ? (last as CommandKind) : undefined;
}

/** The actor hosts' consumers: one per partition. */
export const partitionConsumer = (partition: number) => `actor-host-p${partition}`;

/** partition = FNV-1a(pactId) mod P: stable across processes and restarts. */
export function partitionOf(pactId: string, partitions: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < pactId.length; i++) {
    hash ^= pactId.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % partitions;
}
