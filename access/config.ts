import type { AccessMode } from '../machines/access/types.js';
import { isPartyId, type PartyId } from '../protocol/party.js';

/** How the server lets parties write (README, "Invite mode"). */
export interface AccessConfig {
  /** PACT_ACCESS_MODE: `open` (default) or `invite`. */
  mode: AccessMode;
  /** PACT_SMTP_URL: where codes are mailed (`smtp://user:pass@host:port`, `smtps://…`). */
  smtpUrl?: string;
  /** PACT_MAIL_FROM: the sender of those mails. */
  mailFrom: string;
  /** PACT_ADMIN_PARTY: the only party that may sign `access.admin`. */
  adminParty?: PartyId;
  /** PACT_RATE_LIMIT_ACCESS: codes asked for per client IP per hour (three times as many checks); 0 off. */
  requestsPerIpPerHour: number;
}

/** The access settings, or an error that says what an invite-mode server lacks (it then does not start). */
export function accessConfig(env: NodeJS.ProcessEnv, numbers: Pick<AccessConfig, 'requestsPerIpPerHour'>): AccessConfig {
  const mode = env.PACT_ACCESS_MODE || 'open';
  if (mode !== 'open' && mode !== 'invite') throw new Error(`PACT_ACCESS_MODE is open or invite, not "${mode}"`);
  const adminParty = env.PACT_ADMIN_PARTY || undefined;
  if (adminParty !== undefined && !isPartyId(adminParty)) throw new Error('PACT_ADMIN_PARTY is not a party id (ed25519:…)');
  const config: AccessConfig = {
    mode,
    smtpUrl: env.PACT_SMTP_URL || undefined,
    mailFrom: env.PACT_MAIL_FROM || 'Pact <pact@localhost>',
    adminParty,
    ...numbers,
  };
  if (mode === 'invite' && !config.smtpUrl) {
    throw new Error('PACT_ACCESS_MODE=invite mails one-time codes: set PACT_SMTP_URL (and PACT_MAIL_FROM) to an SMTP server');
  }
  if (mode === 'invite' && !config.adminParty) {
    throw new Error('PACT_ACCESS_MODE=invite queues requests for an operator: set PACT_ADMIN_PARTY to the party id that signs access.admin');
  }
  return config;
}

