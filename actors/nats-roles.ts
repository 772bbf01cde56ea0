import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ACCESS_WILDCARD, CMD_STREAM, EVENT_STREAM, EVENT_SUBJECT, JOURNAL_STREAM, LEASE_BUCKET, OFFER_STREAM, OFFER_WILDCARD, RAIL_ADDRESSES, CREDIT_HOLDS, REPLY_PREFIX, WALLET_SUBJECTS, WALLET_TXS, type CommandKind } from './subjects.js';

/**
 * Who may do what on NATS. Each role connects as its own NATS user, and the server enforces these subject
 * permissions, so the unsigned internal commands come only from their roles: gateways send signed calls
 * and pokes, only the payout worker records payouts, only actor hosts write the journal.
 */
export const NATS_ROLES = ['gateway', 'host', 'payouts', 'reader'] as const;
export type NatsRole = (typeof NATS_ROLES)[number];

export interface Permissions {
  publish: { allow: string[] };
  subscribe: { allow: string[] };
}

const API = '$JS.API';
const commands = (kind: CommandKind) => `pact.cmd.*.${kind}`;
/** Every JetStream API call on one consumer of a journal: create, update, info, delete, next. */
const consumerApi = (stream: string, consumer: string) => [
  `${API}.CONSUMER.*.${stream}.${consumer}`,
  `${API}.CONSUMER.*.${stream}.${consumer}.>`,
  `${API}.CONSUMER.*.*.${stream}.${consumer}`,
];
/** What a reader of a journal stream may ask: its info, a message by sequence, consumers of its own. */
const journalReading = (stream: string) => [`${API}.STREAM.INFO.${stream}`, `${API}.STREAM.MSG.GET.${stream}`, ...consumerApi(stream, '*')];
const REPLIES = `${REPLY_PREFIX}.>`;
/**
 * Each role's own inbox prefix: JetStream's answers and deliveries to one role (commands, with their payment
 * proofs, to the host) are on subjects no other role may subscribe to.
 */
export const inboxPrefixOf = (role: NatsRole) => `_INBOX_${role}`;
const INBOX = (role: NatsRole) => `${inboxPrefixOf(role)}.>`;

export const ROLE_PERMISSIONS: Record<NatsRole, Permissions> = {
  /** Gateways and keepers: signed calls and pokes in, answers back; stream events (each checked by every reader). */
  gateway: {
    publish: { allow: [commands('signed'), commands('poke'), EVENT_SUBJECT, `${API}.INFO`] },
    subscribe: { allow: [INBOX('gateway'), REPLIES] },
  },
  /**
   * Actor hosts: the trusted writers. They set up the streams, hold leases, consume commands, append to the
   * journals (access included), and send the pacts of accepted offers to the hosts of their partitions.
   */
  host: {
    publish: { allow: [`${API}.>`, 'pact.evt.>', OFFER_WILDCARD, ACCESS_WILDCARD, RAIL_ADDRESSES, CREDIT_HOLDS, WALLET_TXS, WALLET_SUBJECTS, commands('accepted'), `$KV.${LEASE_BUCKET}.>`, `$JS.ACK.${CMD_STREAM}.>`, REPLIES] },
    subscribe: { allow: [INBOX('host'), REPLIES] },
  },
  /** The payout worker: works from the read model and records what it paid, nothing else. */
  payouts: {
    publish: { allow: [commands('payouts'), `${API}.INFO`] },
    subscribe: { allow: [INBOX('payouts'), REPLIES] },
  },
  /** Projectors, auditors and evaluators: read the journals with consumers of their own, without acks. */
  reader: {
    publish: { allow: [`${API}.INFO`, ...journalReading(JOURNAL_STREAM), ...journalReading(OFFER_STREAM), ...journalReading(EVENT_STREAM)] },
    subscribe: { allow: [INBOX('reader')] },
  },
};

export interface NatsUser {
  user: string;
  password: string;
}
export type NatsCredentials = Record<NatsRole, NatsUser>;

/** How a role connects: its user (when the NATS has users) and its own inbox prefix. */
export const connectOptionsOf = (role: NatsRole, user: NatsUser | undefined) => ({
  inboxPrefix: inboxPrefixOf(role),
  ...(user ? { user: user.user, pass: user.password } : {}),
});

export function generateCredentials(): NatsCredentials {
  const user = (role: NatsRole): NatsUser => ({ user: `pact-${role}`, password: randomBytes(24).toString('base64url') });
  return Object.fromEntries(NATS_ROLES.map((role) => [role, user(role)])) as NatsCredentials;
}

/** A credentials file: JSON `{ gateway: { user, password }, host: …, payouts: …, reader: … }`. */
export function loadCredentials(file: string): NatsCredentials {
  const value = JSON.parse(readFileSync(file, 'utf8')) as Partial<NatsCredentials>;
  for (const role of NATS_ROLES) {
    const entry = value[role];
    if (typeof entry?.user !== 'string' || typeof entry.password !== 'string') {
      throw new Error(`${file} has no user and password for the NATS role "${role}"`);
    }
  }
  return value as NatsCredentials;
}

/** The `authorization` block of a nats-server configuration that gives each role its user and permissions. */
export function authorizationConfig(credentials: NatsCredentials): string {
  const users = NATS_ROLES.map((role) => ({ ...credentials[role], permissions: ROLE_PERMISSIONS[role] }));
  return `authorization {\n  users = ${JSON.stringify(users, null, 2).replaceAll('\n', '\n  ')}\n}\n`;
}
