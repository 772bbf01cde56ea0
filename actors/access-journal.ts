import type { JetStreamManager } from '@nats-io/jetstream';
import type { Publisher } from './acked-publisher.js';
import type { AccessStatus, EmailRules, PartyAccess, PartyEvent, RulesEvent } from '../machines/access/types.js';
import type { PartyId } from '../protocol/party.js';
import { messageObject, StreamJournal, streamMessage, type Positioned } from './stream-journal.js';
import { ACCESS_RULES_ID, ACCESS_STREAM, accessSubject } from './subjects.js';

/** What anyone may know of a party's access: its status, and what the operator's queue shows. */
export interface AccessView {
  status: AccessStatus;
  email?: string;
  useCase?: string;
  since?: number;
}

/**
 * One entry of the access journal: a party's (with the party's whole access after it, so that its last
 * entry alone tells it) or the operator's address rules (whole, likewise).
 */
export type AccessEntry =
  | { kind: 'party'; party: PartyId; nonce: number; event: PartyEvent; state: PartyAccess }
  | { kind: 'rules'; nonce: number; event: RulesEvent };

export const viewOf = ({ status, email, useCase, since }: PartyAccess): AccessView => ({
  status,
  ...(email ? { email } : {}),
  ...(useCase ? { useCase } : {}),
  ...(since ? { since } : {}),
});

const STATUSES: readonly string[] = ['none', 'pending', 'allowed', 'revoked'];

/** The entry in a message on `subject`; undefined for anything that is not an entry of that subject's entity. */
export function decodeAccessEntry(data: Uint8Array, subject: string): AccessEntry | undefined {
  const value = messageObject<AccessEntry & { party?: string; state?: Partial<PartyAccess> }>(data);
  if (!value || !Number.isSafeInteger(value.nonce) || typeof value.event !== 'object' || value.event === null) return undefined;
  if (value.kind === 'rules') {
    const { rules, calls } = value.event as Partial<RulesEvent>;
    const wellShaped = subject === accessSubject(ACCESS_RULES_ID) && Array.isArray(rules?.allow) && Array.isArray(rules?.deny) && Array.isArray(calls);
    return wellShaped ? (value as AccessEntry) : undefined;
  }
  const state = value.state;
  const wellShaped =
    value.kind === 'party' && typeof value.party === 'string' && accessSubject(value.party) === subject &&
    STATUSES.includes(String(state?.status)) && Array.isArray(state?.requestedAt) && Array.isArray(state?.adminCalls);
  return wellShaped ? (value as AccessEntry) : undefined;
}

/** The access journal (`PACT_ACCESS`): compare-and-set per party, and for the rules; an entry's message id is its place. */
export class AccessJournal extends StreamJournal<AccessEntry> {
  constructor(publisher: Publisher, private readonly manager: JetStreamManager) {
    super(publisher, manager, {
      stream: ACCESS_STREAM,
      subjectOf: accessSubject,
      idOf: (entry) => (entry.kind === 'rules' ? ACCESS_RULES_ID : entry.party),
      messageIdOf: (entry) => `${entry.kind === 'rules' ? ACCESS_RULES_ID : entry.party}:${entry.nonce}`,
      decode: decodeAccessEntry,
    });
  }

  /** The last entry of `id` (a party, or the rules), straight from the stream; undefined without entries. */
  async lastOf(id: string): Promise<Positioned<AccessEntry> | undefined> {
    const message = await streamMessage(this.manager, ACCESS_STREAM, { last_by_subj: accessSubject(id) });
    const value = message && decodeAccessEntry(message.data, message.subject);
    return value ? { seq: message.seq, value } : undefined;
  }

  /** The party's view as its last entry says (never stale: a revoke is seen by the next read anywhere); none without entries. */
  async viewOf(party: string): Promise<AccessView> {
    const last = await this.lastOf(party);
    return last?.value.kind === 'party' ? viewOf(last.value.state) : { status: 'none' };
  }
}

export const NO_RULES: EmailRules = { allow: [], deny: [] };
