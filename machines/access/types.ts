import type { PartyId } from '../../protocol/party.js';

/** `open`: anyone may write; `invite`: only allowed parties may (escrow-service.md, Authentication 6). */
export type AccessMode = 'open' | 'invite';
/** A party's standing on an invite-mode server; `none` for a party never seen. */
export type AccessStatus = 'none' | 'pending' | 'allowed' | 'revoked';

/** The one-time code a party asked for, as kept: its salted hash, never the digits. */
export interface PendingCode {
  salt: string;
  hash: string;
  email: string;
  useCase?: string;
  expiresAt: number;
  /** Wrong codes given so far; at MAX_WRONG_TRIES the code is over. */
  wrongTries: number;
}

/** Everything the service knows of one party's access, rebuilt from the party's journal entries. */
export interface PartyAccess {
  party: PartyId;
  status: AccessStatus;
  /** The address the party proved it reads, once it verified a code. */
  email?: string;
  useCase?: string;
  code?: PendingCode;
  /** When the party asked for codes, newest last, as far back as the request limit looks. */
  requestedAt: number[];
  /** When the status last changed. */
  since?: number;
  /** Digests of the operator's calls applied to this party, newest last (a call is applied once). */
  adminCalls: string[];
}

/** What happens to a party's access: one journal entry each. `status` is the party's status after it. */
export type PartyEvent =
  | { type: 'codeSent'; at: number; code: PendingCode }
  | { type: 'wrongCode'; at: number }
  | { type: 'verified'; at: number; status: 'allowed' | 'pending' | 'revoked' }
  | { type: 'allowed'; at: number; call: string; note?: string }
  | { type: 'revoked'; at: number; call: string; note?: string };

/** The operator's address rules: an exact address (`a@b.c`) or a domain (`@b.c`), lower case. */
export interface EmailRules {
  allow: string[];
  deny: string[];
}

/** The rules after an operator's call, and the digests of its latest calls on them (each applied once). */
export type RulesEvent = { type: 'rulesChanged'; at: number; rules: EmailRules; calls: string[] };

/** `access.admin`'s call (DECISIONS.md, Access). */
export interface AdminCall {
  action: 'allow' | 'revoke' | 'allow-email' | 'deny-email' | 'pending';
  target?: string;
  note?: string;
}
