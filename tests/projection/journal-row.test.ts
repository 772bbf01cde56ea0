import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { JournalEntry } from '../../actors/journal.js';
import { journalRow } from '../../projection/pact-journal-feed.js';

// What the live view of a pact shows of each journal entry.

const party = 'ed25519:8TBPvsYJFCqjqbN3rQFX1eXo5pQBK3LWavp4soEhsr7x';
const evaluator = 'ed25519:GwLVGaKSmXD2C1AXXKBkujxBNWtPQ9SRJCbrYt2otGg4';

test('a signed call: its signer, nonce, time, event without the party it repeats, the state it led to', () => {
  const entry = {
    pactId: 'p_1', nonce: 4, commandId: 'c', state: 'DISPUTED',
    event: { type: 'object', at: 1_000, party, reason: 'late' },
    envelope: { action: 'pacts.object', call: { reason: 'late' }, pactId: 'p_1', stateNonce: 3, issuedAt: 999, signer: party, sig: 'ab' },
  } as unknown as JournalEntry;
  assert.equal(journalRow(17, entry), { seq: 17, nonce: 4, at: 1_000, signer: party, event: { type: 'object', reason: 'late' }, state: 'DISPUTED' });
});

test('a verdict: signed by the evaluator, shown without its signature and hashes, with the payouts it planned', () => {
  const entry = {
    pactId: 'p_1', nonce: 6, commandId: 'c', state: 'SETTLED',
    event: { type: 'verdict', at: 2_000, verdict: { pactId: 'p_1', inputHash: 'ff', distribution: [{ party, bp: 10_000 }], feeFrom: 'proposer', issuedAt: 1, signer: evaluator, sig: 'cd', at: 2_000 } },
    payouts: { rail: 'mock', asset: 'USDC', items: [{ party, kind: 'pot', amount: '1001', key: 'k', transition: 't', status: 'pending', railRef: null }] },
  } as unknown as JournalEntry;
  const row = journalRow(20, entry);
  assert.is(row.signer, evaluator);
  assert.equal(row.event, { type: 'verdict', distribution: [{ party, bp: 10_000 }], feeFrom: 'proposer' });
  assert.equal(row.payouts, [{ party, kind: 'pot', amount: '1001', asset: 'USDC' }]);
});

test('the server’s own commands have no signer; a creation names its rail and parties, not the whole record', () => {
  const poke = { pactId: 'p_1', nonce: 7, commandId: 'c', event: { type: 'poke', at: 3_000 } } as unknown as JournalEntry;
  assert.is(journalRow(21, poke).signer, null);
  assert.equal(journalRow(21, poke).event, { type: 'poke' });
  const created = {
    pactId: 'p_1', nonce: 0, commandId: 'c', state: 'CREATED',
    event: { type: 'created', at: 1, pact: { rail: 'mock', parties: [{ party }], terms: { spec: 'long…' } } },
    envelope: { signer: party },
  } as unknown as JournalEntry;
  assert.equal(journalRow(1, created).event, { type: 'created', rail: 'mock', parties: [party] });
});

test('a fund row says its receipt, nothing of the call that paid', () => {
  const entry = {
    pactId: 'p_1', nonce: 1, commandId: 'c',
    event: { type: 'fund', at: 5, party, receipt: 'mock_1' },
    envelope: { action: 'pacts.fund', call: {}, pactId: 'p_1', stateNonce: 0, issuedAt: 4, signer: party, sig: 'ef' },
  } as unknown as JournalEntry;
  const row = journalRow(2, entry);
  assert.equal(row.event, { type: 'fund', receipt: 'mock_1' });
  assert.not.match(JSON.stringify(row), '"sig"');
});

test.run();
