import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeEntry } from '../../actors/journal.js';
import { journalSubject, pactIdOfJournalSubject } from '../../actors/subjects.js';

// A pact's journal has a subject per position; what is not at its own position is no entry.

const pactId = `p_${'ab'.repeat(16)}`;
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value));
const poke = (nonce: number) => ({ pactId, nonce, commandId: 'c', event: { type: 'poke', at: 1 } });

test('a journal subject names its pact; a subject without a position, or with another shape, names none', () => {
  assert.is(journalSubject(pactId, 0), `pact.evt.${pactId}.0`);
  assert.is(pactIdOfJournalSubject(journalSubject(pactId, 12)), pactId);
  for (const subject of [`pact.evt.${pactId}`, `pact.evt.${pactId}.01`, `pact.evt.${pactId}.x`, `pact.evt.${pactId}.1.2`, `pact.evt..1`, `offer.evt.${pactId}.1`]) {
    assert.is(pactIdOfJournalSubject(subject), undefined, subject);
  }
});

test('an entry is read only at its own position of its own pact', () => {
  assert.equal(decodeEntry(bytes(poke(3)), journalSubject(pactId, 3)), poke(3));
  assert.is(decodeEntry(bytes(poke(3)), journalSubject(pactId, 4)), undefined);
  assert.is(decodeEntry(bytes(poke(3)), journalSubject(`p_${'cd'.repeat(16)}`, 3)), undefined);
  assert.is(decodeEntry(bytes({ ...poke(3), nonce: 3.5 }), `pact.evt.${pactId}.3.5`), undefined);
});

test.run();
