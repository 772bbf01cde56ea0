import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CODE_LIFETIME_MS, emailStanding, evolveParty, MAX_WRONG_TRIES, noAccess, normalEmail, normalRuleTarget, requestProblem, REQUESTS_PER_HOUR, rulesAfter, verification } from '../../machines/access/rules.js';
import type { PartyAccess } from '../../machines/access/types.js';
import { generateKeyPair } from '../../protocol/sign.js';

// The access rules as pure functions: addresses and rules, codes and their tries, the request limit.

const T = 1_800_000_000_000;
const party = generateKeyPair().party;
const rules = { allow: ['@good.example', 'one@else.example'], deny: ['bad@good.example'] };
const withCode = (email = 'x@good.example', status: PartyAccess['status'] = 'none'): PartyAccess =>
  evolveParty({ ...noAccess(party), status }, { type: 'codeSent', at: T, code: { salt: 's', hash: 'h', email, expiresAt: T + CODE_LIFETIME_MS, wrongTries: 0 } });

test('addresses are compared in lower case; rule targets are addresses or @domains', () => {
  assert.is(normalEmail('  Agent@Example.ORG '), 'agent@example.org');
  assert.is(normalEmail('no at sign'), undefined);
  assert.is(normalRuleTarget('@Example.org'), '@example.org');
  assert.is(normalRuleTarget('@nodot'), undefined);
});

test('a deny of the address beats an allow of its domain; unknown otherwise', () => {
  assert.is(emailStanding('x@good.example', rules), 'allowed');
  assert.is(emailStanding('one@else.example', rules), 'allowed');
  assert.is(emailStanding('bad@good.example', rules), 'denied');
  assert.is(emailStanding('two@else.example', rules), 'unknown');
  assert.equal(rulesAfter(rules, 'deny-email', '@good.example'), { allow: ['one@else.example'], deny: ['bad@good.example', '@good.example'] });
  assert.equal(rulesAfter(rules, 'allow-email', 'bad@good.example'), { allow: ['@good.example', 'one@else.example', 'bad@good.example'], deny: [] });
});

test('a right code: allowed when pre-approved, pending otherwise, only pending for a revoked party', () => {
  assert.equal(verification(withCode(), true, rules, T + 1).event, { type: 'verified', at: T + 1, status: 'allowed' });
  assert.equal(verification(withCode('x@other.example'), true, rules, T + 1).event, { type: 'verified', at: T + 1, status: 'pending' });
  const revoked = verification(withCode('x@good.example', 'revoked'), true, rules, T + 1);
  assert.equal(revoked.event, { type: 'verified', at: T + 1, status: 'pending' });
  const after = evolveParty(withCode(), verification(withCode(), true, rules, T + 1).event!);
  assert.is(after.code, undefined, 'a code works once');
  assert.is(after.email, 'x@good.example');
  assert.is(verification(after, true, rules, T + 2).error?.error, 'wrong_code');
});

test('wrong codes count; at five the code is over; an expired code is no code', () => {
  let access = withCode();
  for (let i = 0; i < MAX_WRONG_TRIES; i++) {
    const { event, error } = verification(access, false, rules, T + 1);
    assert.is(error?.error, 'wrong_code');
    access = evolveParty(access, event!);
  }
  assert.equal(verification(access, true, rules, T + 1), { error: verification(noAccess(party), true, rules, T).error }, 'the right code after five wrong ones');
  assert.is(verification(withCode(), true, rules, T + CODE_LIFETIME_MS).event, undefined);
});

test(`at most ${REQUESTS_PER_HOUR} codes an hour, with the seconds until the next`, () => {
  let access = noAccess(party);
  for (let i = 0; i < REQUESTS_PER_HOUR; i++) {
    assert.is(requestProblem(access, T + i * 1_000), undefined);
    access = evolveParty(access, { type: 'codeSent', at: T + i * 1_000, code: withCode().code! });
  }
  assert.equal(requestProblem(access, T + 10_000), { error: 'rate_limited', message: `at most ${REQUESTS_PER_HOUR} codes an hour for one party`, retryAfter: 3_590 });
  assert.is(requestProblem(access, T + 3_600_000), undefined, 'an hour after the first');
});

test.run();
