// `specProblem` (rules of a pact spec a schema cannot say) and `newPact` defaults
// (escrow-service.md "PactSpec", DECISIONS.md "Errors", "Lifecycle points": Proposer).
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { DEFAULT_WINDOWS, newPact, specProblem, type PactSpec } from '../../machines/pact/spec.js';
import { ERROR_STATUS, type PactError } from '../../protocol/errors.js';
import { evaluatorKey, feeRecipient, HOUR_MS, partyKey, policy, T0, threePartySpec, twoPartySpec, usdc } from '../support/pacts.js';

const a = partyKey(1);
const b = partyKey(2);
const c = partyKey(3);
const outsider = partyKey(9);

const withParty = (spec: PactSpec, index: number, change: Partial<PactSpec['parties'][number]>): PactSpec => ({
  ...spec,
  parties: spec.parties.map((p, i) => (i === index ? { ...p, ...change } : p)),
});
const create = (spec: PactSpec, at = T0) =>
  newPact({ id: 'p_new', spec, createdBy: b.party, at, policy, escrowAccount: 'mock:escrow' });

function invalid(problem: PactError | undefined, field: string) {
  assert.ok(problem, `expected a problem with ${field}`);
  assert.is(problem.error, 'invalid_request');
  assert.is(ERROR_STATUS[problem.error], 400);
  assert.is(problem.field, field);
}

test('a plain two-party spec has no problem', () => {
  assert.is(specProblem(twoPartySpec(a, b)), undefined);
  assert.is(specProblem(threePartySpec(a, b, c)), undefined);
});

test('an evaluator override is evaluator_policy_is_server_owned (400); an empty evaluator is accepted', () => {
  const override = { ...twoPartySpec(a, b), evaluator: { model: 'mine' } as unknown as Record<string, never> };
  const problem = specProblem(override);
  assert.is(problem?.error, 'evaluator_policy_is_server_owned');
  assert.is(ERROR_STATUS[problem!.error], 400);
  assert.is(problem?.field, 'call.evaluator');
  assert.is(specProblem({ ...twoPartySpec(a, b), evaluator: {} }), undefined);
});

test('the evaluator override is reported before other problems', () => {
  const spec = { ...twoPartySpec(a, a), evaluator: { pubkey: evaluatorKey.party } as unknown as Record<string, never> };
  assert.is(specProblem(spec)?.error, 'evaluator_policy_is_server_owned');
});

test('a party id that is no Ed25519 public key is invalid_request on that party', () => {
  for (const party of [`ed25519:${'z'.repeat(44)}`, `ed25519:${'2'.repeat(32)}`] as const) {
    invalid(specProblem(withParty(twoPartySpec(a, b), 1, { party })), 'call.parties.1.party');
  }
});

test('a party appearing twice is invalid_request on call.parties', () => {
  invalid(specProblem(twoPartySpec(a, a)), 'call.parties');
});

test('mixed assets within a party or across parties are invalid_request on call.parties', () => {
  invalid(specProblem(withParty(twoPartySpec(a, b), 0, { bond: { amount: '100', asset: 'EURC' } })), 'call.parties');
  invalid(specProblem(withParty(twoPartySpec(a, b), 1, {
    deposit: { amount: '1', asset: 'EURC' }, bond: { amount: '1', asset: 'EURC' },
  })), 'call.parties');
});

test('minParties larger than the parties is invalid_request on call.minParties; equal is fine', () => {
  invalid(specProblem(twoPartySpec(a, b, { minParties: 3 })), 'call.minParties');
  assert.is(specProblem(twoPartySpec(a, b, { minParties: 2 })), undefined);
});

test('a proposer who is not a party, or not required, is invalid_request on call.proposer', () => {
  invalid(specProblem(twoPartySpec(a, b, { proposer: outsider.party })), 'call.proposer');
  invalid(specProblem(withParty(twoPartySpec(a, b), 0, { required: false })), 'call.proposer');
});

test('without a proposer the first party proposes, so it must be required', () => {
  const { proposer: _, ...open } = twoPartySpec(a, b);
  assert.is(specProblem(open), undefined);
  invalid(specProblem(withParty(open, 0, { required: false })), 'call.proposer');
  assert.is(specProblem(withParty(open, 1, { required: false })), undefined);
});

test('newPact: default windows are 24 h / 168 h / 72 h and fundBy = createdAt + fund', () => {
  assert.equal(DEFAULT_WINDOWS, { fund: 24 * HOUR_MS, perform: 168 * HOUR_MS, object: 72 * HOUR_MS });
  const pact = create(twoPartySpec(a, b), 5_000);
  assert.equal(pact.windows, { fund: 86_400_000, perform: 604_800_000, object: 259_200_000 });
  assert.is(pact.fundBy, 5_000 + 86_400_000);
});

test('newPact: partial windows keep the other defaults, and fundBy follows a custom fund window', () => {
  const pact = create(twoPartySpec(a, b, { windows: { fund: 60_000, object: 1_000 } }), 5_000);
  assert.equal(pact.windows, { fund: 60_000, perform: 604_800_000, object: 1_000 });
  assert.is(pact.fundBy, 65_000);
});

test('newPact: the proposer defaults to the first party; a named one is kept', () => {
  const { proposer: _, ...open } = twoPartySpec(b, a);
  assert.is(create(open).proposer, b.party);
  assert.is(create(twoPartySpec(a, b, { proposer: b.party })).proposer, b.party);
});

test('newPact: a fresh CREATED record with unconfirmed parties and the server policy pinned', () => {
  const pact = create(twoPartySpec(a, b, { groupId: 'o_1' }), 7_000);
  assert.equal(
    { id: pact.id, state: pact.state, stateNonce: pact.stateNonce, rail: pact.rail, asset: pact.asset, groupId: pact.groupId,
      createdBy: pact.createdBy, createdAt: pact.createdAt, updatedAt: pact.updatedAt, escrowAccount: pact.escrowAccount },
    { id: 'p_new', state: 'CREATED', stateNonce: 0, rail: 'mock', asset: 'USDC', groupId: 'o_1',
      createdBy: b.party, createdAt: 7_000, updatedAt: 7_000, escrowAccount: 'mock:escrow' },
  );
  assert.equal(pact.parties[1], {
    party: b.party, deposit: usdc(1000), bond: usdc(100), required: true,
    confirmed: false, paidPot: '0', paidBond: '0', fundedAt: null, receipt: null, withdrawals: 0,
  });
  assert.equal(pact.evaluator, policy.evaluator);
  assert.is(pact.arbitrationFeeRecipient, feeRecipient.party);
  for (const field of ['activeAt', 'performBy', 'proposedAt', 'objectBy', 'disputedAt', 'verdictBy', 'closedAt',
    'proposal', 'inputHash', 'objection', 'verdict', 'settlement', 'sourceOffer'] as const) {
    assert.is(pact[field], null, field);
  }
  assert.equal([pact.cosigns, pact.payouts], [[], []]);
});

test('newPact: groupId defaults to null', () => {
  assert.is(create(twoPartySpec(a, b)).groupId, null);
});

test.run();
