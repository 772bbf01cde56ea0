import { pactError, type PactError } from '../../protocol/errors.js';
import type { PartyId } from '../../protocol/party.js';
import type { AccessStatus, AdminCall, EmailRules, PartyAccess, PartyEvent } from './types.js';

// The access rules of an invite-mode server (escrow-service.md, Authentication 6; DECISIONS.md, Access),
// as pure functions of what the journal holds: the gateway and the desk only carry them out.

export const CODE_LIFETIME_MS = 10 * 60_000;
export const MAX_WRONG_TRIES = 5;
/** Codes one party may ask for in an hour. */
export const REQUESTS_PER_HOUR = 5;
const HOUR_MS = 3_600_000;
/** Plain `name@domain` only: nothing a mailer could read as several addresses or a display name. */
const EMAIL = /^[a-z0-9._%+-]{1,64}@[a-z0-9-]+(\.[a-z0-9-]+)+$/;
const DOMAIN = /^@[a-z0-9-]+(\.[a-z0-9-]+)+$/;

export const noAccess = (party: PartyId): PartyAccess => ({ party, status: 'none', requestedAt: [], adminCalls: [] });
/** Operator calls remembered per party and for the rules: more than are ever signed within issuedAt's ten minutes. */
export const REMEMBERED_CALLS = 50;
/** `calls` with `call` added, the oldest forgotten past REMEMBERED_CALLS. */
export const rememberCall = (calls: string[], call: string) => [...calls, call].slice(-REMEMBERED_CALLS);

/** An address as rules compare it, or undefined when it is not one. */
export function normalEmail(value: string): string | undefined {
  const email = value.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : undefined;
}

/** A rule's target (an address or `@domain`) as kept, or undefined when it is neither. */
export function normalRuleTarget(value: string): string | undefined {
  const target = value.trim().toLowerCase();
  if (target.startsWith('@')) return target.length <= 254 && DOMAIN.test(target) ? target : undefined;
  return normalEmail(target);
}

/** What the rules say of an address: a deny (of it or its domain) wins over an allow. */
export function emailStanding(email: string, rules: EmailRules): 'allowed' | 'denied' | 'unknown' {
  const domain = email.slice(email.indexOf('@'));
  const matches = (list: string[]) => list.includes(email) || list.includes(domain);
  if (matches(rules.deny)) return 'denied';
  return matches(rules.allow) ? 'allowed' : 'unknown';
}

/** Why the party may not ask for another code now: more than REQUESTS_PER_HOUR in the last hour (429). */
export function requestProblem(access: PartyAccess, now: number): PactError | undefined {
  const recent = access.requestedAt.filter((at) => now - at < HOUR_MS);
  if (recent.length < REQUESTS_PER_HOUR) return undefined;
  const retryAfter = Math.max(1, Math.ceil((recent[0]! + HOUR_MS - now) / 1000));
  return pactError('rate_limited', `at most ${REQUESTS_PER_HOUR} codes an hour for one party`, { retryAfter });
}

const wrongCode = () => pactError('wrong_code', 'the code is wrong, used or expired; ask for a new one');

/**
 * What a code given by the party does: a right one verifies it (allowed when its address is pre-approved,
 * else pending; a party the operator revoked is never let back in by a rule, only queued), a wrong one
 * counts against the code (401), and without a live code there is nothing to try (401, nothing recorded).
 */
export function verification(access: PartyAccess, right: boolean, rules: EmailRules, now: number): { event?: PartyEvent; error?: PactError } {
  const code = access.code;
  if (!code || code.expiresAt <= now || code.wrongTries >= MAX_WRONG_TRIES) return { error: wrongCode() };
  if (!right) return { event: { type: 'wrongCode', at: now }, error: wrongCode() };
  return { event: { type: 'verified', at: now, status: statusOnVerify(access.status, emailStanding(code.email, rules)) } };
}

function statusOnVerify(current: AccessStatus, standing: ReturnType<typeof emailStanding>): 'allowed' | 'pending' {
  if (current === 'allowed') return 'allowed';
  return current !== 'revoked' && standing === 'allowed' ? 'allowed' : 'pending';
}

/** The party's access after `event`. */
export function evolveParty(access: PartyAccess, event: PartyEvent): PartyAccess {
  switch (event.type) {
    case 'codeSent':
      return { ...access, code: event.code, requestedAt: [...access.requestedAt.filter((at) => event.at - at < HOUR_MS), event.at] };
    case 'wrongCode':
      return access.code ? { ...access, code: { ...access.code, wrongTries: access.code.wrongTries + 1 } } : access;
    case 'verified': {
      const { email, useCase } = access.code!;
      return { ...access, status: event.status, email, useCase, code: undefined, since: event.status === access.status ? access.since : event.at };
    }
    case 'allowed':
      return { ...access, status: 'allowed', since: event.at, adminCalls: rememberCall(access.adminCalls, event.call) };
    case 'revoked':
      return { ...access, status: 'revoked', since: event.at, adminCalls: rememberCall(access.adminCalls, event.call) };
  }
}

/** The rules after an operator's `allow-email` or `deny-email` of `target`: one list gains it, the other loses it. */
export function rulesAfter(rules: EmailRules, action: 'allow-email' | 'deny-email', target: string): EmailRules {
  const without = (list: string[]) => list.filter((t) => t !== target);
  return action === 'allow-email'
    ? { allow: [...without(rules.allow), target], deny: without(rules.deny) }
    : { allow: without(rules.allow), deny: [...without(rules.deny), target] };
}

/** Why an admin call is malformed: a party target for allow/revoke, an address or `@domain` for the rules (400). */
export function adminCallProblem(call: AdminCall, isParty: (value: string) => boolean): PactError | undefined {
  if (call.action === 'pending') return undefined;
  if (call.target === undefined) return pactError('invalid_request', `${call.action} needs a target`, { field: 'call.target' });
  const fits = call.action === 'allow' || call.action === 'revoke' ? isParty(call.target) : normalRuleTarget(call.target) !== undefined;
  return fits ? undefined : pactError('invalid_request', `${call.action} takes ${call.action.endsWith('email') ? 'an address or @domain' : 'a party id'}`, { field: 'call.target' });
}
