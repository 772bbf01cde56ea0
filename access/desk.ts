import { randomBytes } from 'node:crypto';
import { NO_RULES, viewOf, type AccessJournal, type AccessView } from '../actors/access-journal.js';
import { ExpectedSequenceMismatch } from '../actors/stream-journal.js';
import { ACCESS_RULES_ID } from '../actors/subjects.js';
import { CODE_LIFETIME_MS, emailStanding, evolveParty, noAccess, normalRuleTarget, rememberCall, requestProblem, rulesAfter, verification } from '../machines/access/rules.js';
import type { AdminCall, EmailRules, PartyAccess, PartyEvent, PendingCode } from '../machines/access/types.js';
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
type Decision<T> = { event?: PartyEvent; error?: PactError; answer?: T };
type Loaded = { access: PartyAccess; lastSeq: number; nonce: number; rules: EmailRules };

/** Appends that lost a compare-and-set to another node are decided again on what the journal then holds. */
const ATTEMPTS = 3;
const busy = (): PactError => pactError('unavailable', 'access changed under this call several times; retry');
const replayed = (): PactError => pactError('invalid_state', 'this operator call was applied before; sign a new one');

/**
 * Where access is asked for, verified and administered on this node. Every entry holds the party's (or the
 * rules') whole state after it, so each call reads one message, and appends compare-and-set: nodes deciding
 * at once cannot both write; the loser decides again. Signatures and call shapes are checked before
 * (gateway/access-routes.ts).
 */
export class AccessDesk {
  constructor(private readonly deps: AccessDeskDeps) {}

  view(party: string): Promise<AccessView> {
    return this.deps.journal.viewOf(party);
  }

  /**
   * Mails a code to `email` for `party`. The answer is the same whether the address is known, allowed or
   * denied (a denied one is sent nothing, but the request counts against the party's limit like any). The
   * mail goes first, once: when it fails nothing is kept (503), and a code mailed but not kept is no code.
   */
  async request(party: PartyId, email: string, useCase: string | undefined, now: number): Promise<Outcome<{ expiresAt: number }>> {
    const expiresAt = now + CODE_LIFETIME_MS;
    const loaded = await this.load(party);
    const { access, rules } = loaded;
    const limited = requestProblem(access, now);
    if (limited) return { ok: false, error: limited };
    const salt = newSalt();
    let hash = randomBytes(32).toString('hex'); // matches no code: what a denied address is "sent"
    if (emailStanding(email, rules) !== 'denied') {
      const code = newCode();
      const sent = await this.mail(email, code, party);
      if (sent) return { ok: false, error: sent };
      hash = codeHash(salt, party, code);
    }
    const pendingCode: PendingCode = { salt, hash, email, ...(useCase ? { useCase } : {}), expiresAt, wrongTries: 0 };
    return this.decide(party, (current) => {
      const over = requestProblem(current, now); // another node took the last of the hour meanwhile
      return over ? { error: over } : { event: { type: 'codeSent', at: now, code: pendingCode }, answer: { expiresAt } };
    }, loaded);
  }

  /** Checks `otp` against the party's live code: allowed or pending when right; 401 `wrong_code` otherwise. */
  verify(party: PartyId, otp: string, now: number): Promise<Outcome<AccessView>> {
    return this.decide(party, (access, rules) => {
      const right = access.code !== undefined && codeMatches(access.code, party, otp);
      const { event, error } = verification(access, right, rules, now);
      return { event, error, answer: viewOf(event ? evolveParty(access, event) : access) };
    });
  }

  /** An operator's call (its signer already known to be the admin party), named by `callId`, applied once. */
  async admin(call: AdminCall, callId: string, now: number): Promise<Outcome<Record<string, unknown>>> {
    switch (call.action) {
      case 'pending':
        return { ok: true, pending: await this.deps.pending() };
      case 'allow':
      case 'revoke': {
        const event: PartyEvent = { type: call.action === 'allow' ? 'allowed' : 'revoked', at: now, call: callId, ...(call.note ? { note: call.note } : {}) };
        const party = call.target as PartyId;
        return this.decide(party, (access) =>
          access.adminCalls.includes(callId) ? { error: replayed() } : { event, answer: { party, ...viewOf(evolveParty(access, event)) } },
        );
      }
      case 'allow-email':
      case 'deny-email':
        return this.changeRules(call.action, normalRuleTarget(call.target!)!, callId, now);
    }
  }

  private async mail(to: string, code: string, party: string): Promise<PactError | undefined> {
    const serverName = this.deps.serverName();
    try {
      await this.deps.mailer.send({ to, subject: `Your access code for ${serverName}`, text: mailText(code, party, serverName) });
      return undefined;
    } catch (error) {
      console.error('access mail failed:', String(error));
      return pactError('mail_unavailable', 'the code could not be mailed now; ask again later');
    }
  }

  /**
   * Loads the party and the rules (or starts from `loaded`, read by the caller), lets `decide` say what
   * happens, and appends its event compare-and-set; when another node wrote first, decides again on what
   * the journal then holds.
   */
  private async decide<T extends object>(party: PartyId, decide: (access: PartyAccess, rules: EmailRules) => Decision<T>, loaded?: Loaded): Promise<Outcome<T>> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const { access, lastSeq, nonce, rules } = attempt === 1 && loaded ? loaded : await this.load(party);
      const { event, error, answer } = decide(access, rules);
      try {
        if (event) await this.deps.journal.append({ kind: 'party', party, nonce, event, state: evolveParty(access, event) }, lastSeq);
      } catch (failure) {
        if (failure instanceof ExpectedSequenceMismatch) continue;
        throw failure;
      }
      return error ? { ok: false, error } : ({ ok: true, ...answer } as Outcome<T>);
    }
    return { ok: false, error: busy() };
  }

  private async changeRules(action: 'allow-email' | 'deny-email', target: string, callId: string, now: number): Promise<Outcome<{ rules: EmailRules }>> {
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const { rules, calls, lastSeq, nonce } = await this.rules();
      if (calls.includes(callId)) return { ok: false, error: replayed() };
      const next = rulesAfter(rules, action, target);
      try {
        await this.deps.journal.append({ kind: 'rules', nonce, event: { type: 'rulesChanged', at: now, rules: next, calls: rememberCall(calls, callId) } }, lastSeq);
        return { ok: true, rules: next };
      } catch (failure) {
        if (!(failure instanceof ExpectedSequenceMismatch)) throw failure;
      }
    }
    return { ok: false, error: busy() };
  }

  /** The party (its last entry's state, sequence and the next nonce) and the rules, read together. */
  private async load(party: PartyId): Promise<Loaded> {
    const [loaded, { rules }] = await Promise.all([this.party(party), this.rules()]);
    return { ...loaded, rules };
  }

  /** The party as its last entry holds it, that entry's sequence, and the next nonce. */
  private async party(party: PartyId): Promise<{ access: PartyAccess; lastSeq: number; nonce: number }> {
    const last = await this.deps.journal.lastOf(party);
    if (last?.value.kind !== 'party') return { access: noAccess(party), lastSeq: 0, nonce: 0 };
    return { access: last.value.state, lastSeq: last.seq, nonce: last.value.nonce + 1 };
  }

  /** The rules as their last entry holds them, its sequence, and the next nonce. */
  private async rules(): Promise<{ rules: EmailRules; calls: string[]; lastSeq: number; nonce: number }> {
    const last = await this.deps.journal.lastOf(ACCESS_RULES_ID);
    if (last?.value.kind !== 'rules') return { rules: NO_RULES, calls: [], lastSeq: 0, nonce: 0 };
    return { rules: last.value.event.rules, calls: last.value.event.calls, lastSeq: last.seq, nonce: last.value.nonce + 1 };
  }
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
