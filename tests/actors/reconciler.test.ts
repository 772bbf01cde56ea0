import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Reconciler } from '../../actors/reconciler.js';
import { collectKey } from '../../machines/pact/collects.js';
import { evolve } from '../../machines/pact/evolve.js';
import type { Pact } from '../../machines/pact/types.js';
import type { PartyId } from '../../protocol/party.js';
import type { CollectAt, Rail } from '../../rails/rail.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// What the reconciler remembers between passes, and where each pass starts, over a rail that reports
// the places it is given (the mock, credit and EVM rails each have their own tests through the service).

const a = generateKeyPair();
const b = generateKeyPair();

class Places {
  readonly pacts = new Map<string, Pact>();
  readonly places: CollectAt[] = [];
  readonly passesFrom: number[] = [];
  readonly reversals: string[] = [];

  /** A pact in CREATED whose buyer's fund collected `receipt` at the next position. */
  collectOfNewPact(receipt: string): string {
    const id = `p_${(this.pacts.size + 1).toString(16).padStart(32, '0')}`;
    const pact = { ...pactFrom(twoPartySpec(a, b)), id };
    this.pacts.set(id, pact);
    const key = collectKey(id, pact.parties[1]!);
    this.places.push({ position: this.places.length * 2, collect: { key, ref: receipt, payer: b.party, amount: { amount: '1', asset: 'USD' } } });
    return id;
  }

  /** Both parties fund, the buyer with `receipt`: the pact is ACTIVE. */
  fundBoth(id: string, receipt: string): void {
    const fund = (pact: Pact, party: PartyId, ref: string) => evolve(pact, { type: 'fund', at: pact.updatedAt + 1, party, receipt: ref })!;
    this.pacts.set(id, fund(fund(this.pacts.get(id)!, a.party, 'r-seller'), b.party, receipt));
  }

  cancel(id: string): void {
    const pact = this.pacts.get(id)!;
    this.pacts.set(id, evolve(pact, { type: 'poke', at: pact.fundBy })!);
  }

  get rail(): Rail {
    const rail = {
      name: 'mock',
      collects: async function* (this: Places, from: number) {
        this.passesFrom.push(from);
        yield* this.places.filter((place) => place.position >= from);
      }.bind(this),
      payout: async ({ key }: { key: string }) => {
        this.reversals.push(key);
        return { key, ref: `reversal-${this.reversals.length}` };
      },
    };
    return rail as unknown as Rail;
  }

  reconciler(): Reconciler {
    return new Reconciler(new Map([['mock', this.rail]]), async (pactId) => this.pacts.get(pactId));
  }
}

test('collects judged for good move the next pass past them, and nothing of them is remembered', async () => {
  const places = new Places();
  for (let i = 0; i < 5; i++) places.fundBoth(places.collectOfNewPact(`r${i}`), `r${i}`);
  const reconciler = places.reconciler();
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock'), { position: 9, judged: new Set() });
  await reconciler.run();
  assert.equal(places.passesFrom, [0, 9]);
  assert.equal(places.reversals, []);
});

test('an open collect holds the position; those judged after it are remembered until it is judged too', async () => {
  const places = new Places();
  const ids = ['r0', 'r1', 'r2'].map((receipt) => places.collectOfNewPact(receipt));
  places.fundBoth(ids[0]!, 'r0');
  places.fundBoth(ids[2]!, 'r2'); // ids[1] stays in CREATED: its buyer may still retry the fund
  const reconciler = places.reconciler();
  await reconciler.run();
  const afterFirst = reconciler.progressOf('mock');
  assert.is(afterFirst.position, 1);
  assert.equal([...afterFirst.judged], [places.places[2]!.collect!.key]);

  places.cancel(ids[1]!); // the fund deadline passed with the collect unrecorded: it is paid back
  await reconciler.run();
  assert.equal(places.reversals, [`${places.places[1]!.collect!.key}:reversal`]);
  assert.equal(reconciler.progressOf('mock'), { position: 5, judged: new Set() });
  await reconciler.run();
  assert.equal(places.passesFrom, [0, 1, 5]);
  assert.is(places.reversals.length, 1, 'paid back once');
});

test('a place the rail cannot judge yet holds the position and is read again', async () => {
  const places = new Places();
  places.places.push({ position: 0, collect: undefined });
  places.fundBoth(places.collectOfNewPact('r1'), 'r1');
  const reconciler = places.reconciler();
  await reconciler.run();
  await reconciler.run();
  assert.equal(places.passesFrom, [0, 0]);
  assert.is(reconciler.progressOf('mock').judged.size, 1);

  places.places.shift(); // the rail now knows the place held no collect: it reports nothing there
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock'), { position: 3, judged: new Set() });
});

test('a collect of a pact the read model does not show yet stays open', async () => {
  const places = new Places();
  const id = places.collectOfNewPact('r0');
  const shown = places.pacts.get(id)!;
  places.pacts.delete(id);
  const reconciler = places.reconciler();
  await reconciler.run();
  assert.is(reconciler.progressOf('mock').position, 0);
  places.pacts.set(id, shown);
  places.fundBoth(id, 'r0');
  await reconciler.run();
  assert.is(reconciler.progressOf('mock').position, 1);
});

test.run();
