import { NO_RULES, type AccessJournal, type AccessView } from '../actors/access-journal.js';
import { ExpectedSequenceMismatch } from '../actors/stream-journal.js';
import { ACCESS_RULES_ID } from '../actors/subjects.js';
import { CODE_LIFETIME_MS, emailStanding, evolveParty, noAccess, normalRuleTarget, requestProblem, rulesAfter, verification } from '../machines/access/rules.js';
import type { AdminCall, EmailRules, PartyAccess, PartyEvent } from '../machines/access/types.js';
import { pactError, type PactError } from '../protocol/errors.js';
import type { PartyId } from '../protocol/party.js';
import type { Clock } from '../runtime/clock.js';
import { codeHash, codeMatches, newCode, newSalt } from './codes.js';
import type { Mailer } from './mailer.js';
import type { PendingParty } from './pending.js';

export interface AccessDeskDeps {
  journal: AccessJournal;
  /** Lists the parties whose last entry says pending (a read of the journal). */
  pending: () => Promise<PendingParty[]>;
  mailer: Mailer;
  clock: Clock;
  /** How the mail names this server. */
  serverName: () => string;
}

type Outcome<T> = ({ ok: true } & T) | { ok: false; error: PactError };

/** Appends that lost a compare-and-set to another node are decided again on what the journal then holds. */
const ATTEMPTS = 3;

/**
 * Where access is asked for, verified and administered on this node. Each party's entries, and the rules,
 * are appended compare-and-set, so nodes deciding at once cannot both write; the loser decides again.
 * Signatures and call shapes are checked before (gateway/access-routes.ts).
 */
export class AccessDesk {
  constructor(private readonly deps: AccessDeskDeps) {}

  view(party: string): Promise<AccessView> {
    return this.deps.journal.viewOf(party);
  }

  /**
   * Mails a code to `email` for `party`. The answer is the same whether the address is known, allowed or
   * denied (a denied one is sent nothing). The mail goes first: when it fails nothing is kept (503), and a
   * code mailed but not kept is no code.
   */
  async request(party: PartyId, email: string, useCase: string | undefined, now: number): Promise<Outcome<{ expiresAt: number }>> {
    const expiresAt = now + CODE_LIFETIME_MS;
    return this.decide(party, async (access, rules) => {
      const limited = requestProblem(access, now);
      if (limited) return { error: limited };
      if (emailStanding(email, rules) === 'denied') return { answer: { expiresAt } };
      const code = newCode();
      const salt = newSalt();
      try {
        await this.deps.mailer.send({ to: email, subject: `Your access code for ${this.deps.serverName()}`, text: mailText(code, party, this.deps.serverName()) });
      } catch (error) {
        console.error('access mail failed:', String(error));
        return { error: pactError('mail_unavailable', 'the code could not be mailed now; ask again later') };
      }
      const event: PartyEvent = { type: 'codeSent', at: now, code: { salt, hash: codeHash(salt, party, code), email, ...(useCase ? { useCase } : {}), expiresAt, wrongTries: 0 } };
      return { event, answer: { expiresAt } };
    });
  }

  /** Checks `otp` against the party's live code: allowed or pending when right; 401 `wrong_code` otherwise. */
  verify(party: PartyId, otp: string, now: number): Promise<Outcome<AccessView>> {
    return this.decide(party, async (access, rules) => {
      const right = access.code !== undefined && codeMatches(access.code, party, otp);
      const { event, error } = verification(access, right, rules, now);
      return { event, error, answer: event ? viewOf(evolveParty(access, event)) : viewOf(access) };
    });
  }

  /** An operator's call (its signer already known to be the admin party). */
  async admin(call: AdminCall, now: number): Promise<Outcome<Record<string, unknown>>> {
    switch (call.action) {
      case 'pending':
        return { ok: true, pending: await this.deps.pending() };
      case 'allow':
      case 'revoke': {
        const event: PartyEvent = { type: call.action === 'allow' ? 'allowed' : 'revoked', at: now, ...(call.note ? { note: call.note } : {}) };
        const party = call.target as PartyId;
        return this.decide(party, async (access) => ({ event, answer: { party, ...viewOf(evolveParty(access, event)) } }));
      }
      case 'allow-email':
      case 'deny-email':
        return this.changeRules(call.action, normalRuleTarget(call.target!)!, now);
    }
  }

  /**
   * Loads the party and the rules, lets `decide` say what happens, and appends its event compare-and-set;
   * when another node wrote first, decides again on what the journal holds.
   */
  private async decide<T extends object>(
    party: PartyId,
    decide: (access: PartyAccess, rules: EmailRules) => Promise<{ event?: PartyEvent; error?: PactError; answer?: T }>,
  ): Promise<Outcome<T>> {
    for (let attempt = 1; ; attempt++) {
      const [{ access, lastSeq, nonce }, { rules }] = await Promise.all([this.party(party), this.rules()]);
      const { event, error, answer } = await decide(access, rules);
      try {
        if (event) {
          const after = evolveParty(access, event);
          await this.deps.journal.append({ kind: 'party', party, nonce, event, after: viewOf(after) }, lastSeq);
        }
      } catch (failure) {
        if (failure instanceof ExpectedSequenceMismatch && attempt < ATTEMPTS) continue;
        throw failure;
      }
      return error ? { ok: false, error } : ({ ok: true, ...answer } as Outcome<T>);
    }
  }

  private async changeRules(action: 'allow-email' | 'deny-email', target: string, now: number): Promise<Outcome<{ rules: EmailRules }>> {
    for (let attempt = 1; ; attempt++) {
      const { rules, lastSeq, nonce } = await this.rules();
      const next = rulesAfter(rules, action, target);
      try {
        await this.deps.journal.append({ kind: 'rules', nonce, event: { type: 'rulesChanged', at: now, rules: next } }, lastSeq);
        return { ok: true, rules: next };
      } catch (failure) {
        if (!(failure instanceof ExpectedSequenceMismatch) || attempt >= ATTEMPTS) throw failure;
      }
    }
  }

  /** The party replayed from its entries, the sequence of its last, and the nonce of its next. */
  private async party(party: PartyId): Promise<{ access: PartyAccess; lastSeq: number; nonce: number }> {
    const entries = await this.deps.journal.entriesAfter(party, 0);
    const access = entries.reduce((current, { value }) => (value.kind === 'party' ? evolveParty(current, value.event) : current), noAccess(party));
    return { access, lastSeq: entries.at(-1)?.seq ?? 0, nonce: entries.length };
  }

  /** The rules as their last entry says (each holds them whole), its sequence, and the next nonce. */
  private async rules(): Promise<{ rules: EmailRules; lastSeq: number; nonce: number }> {
    const last = await this.deps.journal.lastOf(ACCESS_RULES_ID);
    if (last?.value.kind !== 'rules') return { rules: NO_RULES, lastSeq: 0, nonce: 0 };
    return { rules: last.value.event.rules, lastSeq: last.seq, nonce: last.value.nonce + 1 };
  }
}

function viewOf({ status, email, useCase, since }: PartyAccess): AccessView {
  return { status, ...(email ? { email } : {}), ...(useCase ? { useCase } : {}), ...(since ? { since } : {}) };
}

function mailText(code: string, party: string, serverName: string): string {
  return [
    `Your one-time access code for the Pact escrow server ${serverName} is:`,
    '',
    `    ${code}`,
    '',
    `It lets the agent ${party} write on that server once the agent sends it back (POST /access/verify).`,
    'It works once and for ten minutes. If you did not ask for it, ignore this message.',
    '',
  ].join('\n');
}
