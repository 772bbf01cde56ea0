import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Pact } from '../../machines/pact/types.js';
import { CreditHolds, type AskPlace } from '../../rails/credit/credit-holds.js';
import { CreditRail } from '../../rails/credit/credit-rail.js';
import type { WalletClient } from '../../rails/credit/wallet-client.js';
import { RailError } from '../../rails/rail.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { creditHoldSubject, RAILS_STREAM } from '../../actors/subjects.js';
import type { ReserveBody } from '../../rails/credit/wallet-client.js';
import { startJournalBench, type JournalBench } from '../support/journal-bench.js';

// The credit rail's holds on NATS, as the reconciler walks them: every ask (a key's first, or one after a
// refusal) is a place of its own, answered by the record after it; so a hold made after a refusal is never
// hidden behind a place already judged.

const test = suite<{ bench: JournalBench; holds: CreditHolds }>('credit holds');
test.before(async (context) => {
  context.bench = await startJournalBench('credit-holds');
  context.holds = new CreditHolds(context.bench.nats.publisher, context.bench.nats.jsm);
});
test.after(({ bench }) => bench.stop());

const payer = generateKeyPair().party;
let keys = 0;
const newKey = () => `p_${(++keys).toString(16).padStart(32, '0')}:fund.0:${payer}`;
const request = (key: string): ReserveBody => ({
  walletId: 'w_1',
  amount: { amount: '100', asset: 'USD' },
  activity: { kind: 'pact', pactId: key.split(':')[0]!, party: payer, role: 'funder' },
  expiresAt: '2030-01-01T00:00:00.000Z',
  memo: 'test',
});

async function placesOf(holds: CreditHolds, key: string, from = 0): Promise<AskPlace[]> {
  const places: AskPlace[] = [];
  for await (const place of holds.asks(from)) if (place.ask.key === key) places.push(place);
  return places;
}

const answerOf = (place: AskPlace) => place.answer?.reservationId ?? place.answer?.refused ?? 'unanswered';

test('an ask answered with a reservation is one place', async ({ holds }) => {
  const key = newKey();
  const ask = await holds.asking(key, request(key));
  assert.equal((await placesOf(holds, key)).map(answerOf), ['unanswered']);
  await holds.reserved(ask, 'r_1');
  assert.equal((await placesOf(holds, key)).map(answerOf), ['r_1']);
  assert.equal(await holds.asking(key, request(key)), { ...ask, reservationId: 'r_1', attempt: 1 }, 'a reservation stands');
});

test('an ask after a refusal is a place of its own', async ({ holds }) => {
  const key = newKey();
  await holds.refused(await holds.asking(key, request(key)), 'insufficient_credit');
  const again = await holds.asking(key, request(key));
  assert.is(again.attempt, 2);
  await holds.reserved(again, 'r_2');
  const places = await placesOf(holds, key);
  assert.equal(places.map(answerOf), ['insufficient_credit', 'r_2']);
  assert.equal(await holds.askAt(places[1]!.seq), places[1]);
  assert.equal((await placesOf(holds, key, places[0]!.seq + 1)).map(answerOf), ['r_2'], 'a walk starts where it is told');
});

test('a reservation recorded after a refusal of the same ask gets an ask of its own first', async ({ holds }) => {
  const key = newKey();
  const ask = await holds.asking(key, request(key));
  await holds.refused(ask, 'insufficient_credit'); // one answer refused…
  await holds.reserved(ask, 'r_3'); // …the other, to the same ask, held
  assert.equal((await placesOf(holds, key)).map(answerOf), ['insufficient_credit', 'r_3']);
  assert.is((await holds.latest(key))?.reservationId, 'r_3');
});

test('a refusal that comes late, once the key was asked again, answers nothing', async ({ holds }) => {
  const key = newKey();
  const first = await holds.asking(key, request(key));
  await holds.refused(first, 'insufficient_credit');
  const again = await holds.asking(key, request(key));
  await holds.refused(first, 'insufficient_credit'); // the first ask's other answer, late
  assert.equal(await holds.latest(key), again);
  assert.equal((await placesOf(holds, key)).map(answerOf), ['insufficient_credit', 'unanswered']);
});

test('keys asked at once are each answered by their own records', async ({ holds }) => {
  const [k1, k2] = [newKey(), newKey()];
  const a1 = await holds.asking(k1, request(k1));
  const a2 = await holds.asking(k2, request(k2));
  await holds.refused(a2, 'insufficient_credit');
  await holds.reserved(a1, 'r_6');
  assert.equal((await placesOf(holds, k1)).map(answerOf), ['r_6']);
  assert.equal((await placesOf(holds, k2)).map(answerOf), ['insufficient_credit']);
});

test('a reservation and a refusal of one ask recorded at once: the reservation is found at a place', async ({ holds }) => {
  for (let i = 0; i < 5; i++) {
    const key = newKey();
    const ask = await holds.asking(key, request(key));
    const answers = [() => holds.reserved(ask, `r_${key}`), () => holds.refused(ask, 'insufficient_credit')];
    await Promise.all((i % 2 ? answers.reverse() : answers).map((answer) => answer()));
    const found = (await placesOf(holds, key)).map(answerOf);
    assert.is(found.filter((answer) => answer === `r_${key}`).length, 1, found.join());
    assert.is((await holds.latest(key))?.reservationId, `r_${key}`);
  }
});

test('a stream written before asks came between a refusal and a reservation: the reservation answers the ask', async ({ bench, holds }) => {
  const key = newKey();
  const ask = await holds.asking(key, request(key));
  await holds.refused(ask, 'insufficient_credit');
  const last = await bench.nats.jsm.streams.getMessage(RAILS_STREAM, { last_by_subj: creditHoldSubject(key) });
  await holds.append({ ...ask, reservationId: 'r_old', attempt: 2 }, last!.seq);
  assert.equal((await placesOf(holds, key)).map(answerOf), ['r_old']);
});

test('a record that is not one (anyone allowed on NATS could write it) is passed over in an answer', async ({ bench, holds }) => {
  const key = newKey();
  const ask = await holds.asking(key, request(key));
  const junk = await bench.nats.js.publish(creditHoldSubject(key), new TextEncoder().encode('not a record'));
  await holds.append({ ...ask, reservationId: 'r_junk', attempt: 2 }, junk.seq);
  assert.equal((await placesOf(holds, key)).map(answerOf), ['r_junk']);
});

test('no ask is found where a key has none', async ({ holds }) => {
  const key = newKey();
  await holds.reserved(await holds.asking(key, request(key)), 'r_4');
  const [place] = await placesOf(holds, key);
  assert.is(await holds.askAt(place!.seq + 1), undefined, 'the reservation is no ask');
  assert.is(await holds.askAt(0), undefined);
  assert.is(await holds.askAt(1_000_000), undefined);
});

/**
 * The credit rail over these holds, its pacts in `state` (but those of `unreadable`, whose read fails), its
 * wallet answering every reservation with `reserve`.
 */
function creditRail(holds: CreditHolds, state: Pact['state'], reserve: () => Promise<unknown>, unreadable = new Set<string>()): CreditRail {
  const wallet = { reserve } as unknown as WalletClient;
  const pactOf = async (pactId: string) => {
    if (unreadable.has(pactId)) throw new Error(`${pactId} cannot be read now`);
    return { state } as Pact;
  };
  return new CreditRail({ wallet, holds, walletOf: async () => 'w_1', pactOf, now: Date.now });
}

/** A new key's ask whose answer a crash lost, and the stream sequence it sits at. */
async function unansweredAsk(holds: CreditHolds) {
  const key = newKey();
  const ask = await holds.asking(key, request(key));
  const [place] = await placesOf(holds, key);
  return { key, ask, seq: place!.seq };
}

/** The collect the credit rail reports for a hold `ref` made under `key`. */
const heldUnder = (key: string, ref: string) => ({ key, ref, payer, amount: { amount: '100', asset: 'USD' } });

test('an unanswered ask is undetermined while its pact takes funds; then a refusal the wallet gives is recorded, and it held nothing', async ({ holds }) => {
  const { key, seq } = await unansweredAsk(holds);
  let asked = 0;
  const refusing = async () => {
    asked++;
    throw new RailError('insufficient_funds', 'wallet w_1 has 10 available');
  };
  assert.is(await creditRail(holds, 'CREATED', refusing).collectAt(seq), 'undetermined');
  assert.is(asked, 0, 'the payer may still retry: not asked');
  const moved = creditRail(holds, 'CANCELLED', refusing);
  assert.is(await moved.collectAt(seq), 'none');
  assert.is((await holds.latest(key))?.refused, 'insufficient_funds');
  assert.is(await moved.collectAt(seq), 'none');
  assert.is(asked, 1, 'asked once: the refusal is on record');
});

test('an unanswered ask the wallet cannot answer now stays undetermined; one it holds is a collect', async ({ holds }) => {
  const { key, seq } = await unansweredAsk(holds);
  const down = creditRail(holds, 'CANCELLED', async () => {
    throw new RailError('rail_failure', 'the wallet service did not answer');
  });
  assert.is(await down.collectAt(seq), 'undetermined');
  const up = creditRail(holds, 'CANCELLED', async () => ({ id: 'r_5', status: 'held' }));
  assert.equal(await up.collectAt(seq), heldUnder(key, 'r_5'));
  assert.is((await holds.latest(key))?.reservationId, 'r_5');
});

test('a lost answer that another node gave while this one was refused: the place shows that node\'s hold', async ({ holds }) => {
  const { key, ask, seq } = await unansweredAsk(holds);
  const refusedAfterTheOther = async () => {
    await holds.reserved(ask, 'r_other'); // the other node's answer lands first
    throw new RailError('insufficient_funds', 'wallet w_1 has 10 available');
  };
  assert.equal(await creditRail(holds, 'CANCELLED', refusedAfterTheOther).collectAt(seq), heldUnder(key, 'r_other'));
  assert.is((await holds.latest(key))?.reservationId, 'r_other', 'the late refusal recorded nothing');
});

test('an ask whose reading fails is undetermined, and the walk goes on past it', async ({ holds }) => {
  const [k1, k2] = [newKey(), newKey()];
  await holds.asking(k1, request(k1)); // answers lost to a crash
  await holds.asking(k2, request(k2));
  const [p1] = await placesOf(holds, k1);
  const [p2] = await placesOf(holds, k2);
  const rail = creditRail(holds, 'CANCELLED', async () => ({ id: 'r_9', status: 'held' }), new Set([k1.split(':')[0]!]));
  const reported = [];
  for await (const { position, place } of rail.collects(p1!.seq)) if (position === p1!.seq || position === p2!.seq) reported.push(typeof place === 'object' ? place.ref : place);
  assert.equal(reported, ['undetermined', 'r_9']);
});

test('a lost answer this node holds after another node\'s refusal came first: the hold is at a place of its own', async ({ holds }) => {
  const { key, ask, seq } = await unansweredAsk(holds);
  const heldAfterTheOthersRefusal = async () => {
    await holds.refused(ask, 'insufficient_credit'); // the other node's answer lands first
    return { id: 'r_mine', status: 'held' };
  };
  assert.is(await creditRail(holds, 'CANCELLED', heldAfterTheOthersRefusal).collectAt(seq), 'none');
  assert.equal((await placesOf(holds, key)).map(answerOf), ['insufficient_credit', 'r_mine']);
});

test('the credit rail reports each ask at its stream sequence, from where it is told', async ({ holds }) => {
  const [k1, k2] = [newKey(), newKey()];
  await holds.reserved(await holds.asking(k1, request(k1)), 'r_7');
  await holds.reserved(await holds.asking(k2, request(k2)), 'r_8');
  const [p1] = await placesOf(holds, k1);
  const [p2] = await placesOf(holds, k2);
  const rail = creditRail(holds, 'ACTIVE', async () => assert.unreachable('nothing to ask'));
  const reported = async (from: number) => {
    const places: [number, string][] = [];
    for await (const { position, place } of rail.collects(from)) if (typeof place === 'object' && [k1, k2].includes(place.key)) places.push([position, place.ref]);
    return places;
  };
  assert.equal(await reported(p1!.seq), [[p1!.seq, 'r_7'], [p2!.seq, 'r_8']]);
  assert.equal(await reported(p1!.seq + 1), [[p2!.seq, 'r_8']]);
});

test.run();
