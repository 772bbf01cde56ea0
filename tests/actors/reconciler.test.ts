import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Reconciler } from '../../actors/reconciler.js';
import { collectKey } from '../../machines/pact/collects.js';
import { evolve } from '../../machines/pact/evolve.js';
import type { Pact } from '../../machines/pact/types.js';
import type { PartyId } from '../../protocol/party.js';
import type { CollectAt, CollectPlace, Rail } from '../../rails/rail.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

// What the reconciler keeps between passes, what each pass reads, and what it pays back, over a rail that
// reports the places it is given (tests/rails/ has the mock's and the credit rail's own places; the service's
// tests reconcile on every rail).

const a = generateKeyPair();
const b = generateKeyPair();

class Places {
  readonly pacts = new Map<string, Pact>();
  readonly places: CollectAt[] = [];
  readonly passesFrom: number[] = [];
  readonly askedAgain: number[] = [];
  readonly reversals: string[] = [];
  failReversals = false;
  failCollectAt = false;
  failWalkAfter = Infinity;

  /** A pact in CREATED whose buyer's fund collected `receipt` at the next place (positions 0, 2, 4…). */
  collectOfNewPact(receipt: string): string {
    const id = `p_${(this.pacts.size + 1).toString(16).padStart(32, '0')}`;
    const pact = { ...pactFrom(twoPartySpec(a, b)), id };
    this.pacts.set(id, pact);
    const key = collectKey(id, pact.parties[1]!);
    this.places.push({ position: this.places.length * 2, place: { key, ref: receipt, payer: b.party, amount: { amount: '1', asset: 'USD' } } });
    return id;
  }

  undetermined(): number {
    const position = this.places.length * 2;
    this.places.push({ position, place: 'undetermined' });
    return position;
  }

  /** Both parties fund, the buyer with `receipt`: the pact is ACTIVE. */
  fundBoth(id: string, receipt: string): void {
    const fund = (pact: Pact, party: PartyId, ref: string) => evolve(pact, { type: 'fund', at: pact.updatedAt + 1, party, receipt: ref })!;
    this.pacts.set(id, fund(fund(this.pacts.get(id)!, a.party, 'r-seller'), b.party, receipt));
  }

  /** The fund deadline passes: the pact is CANCELLED, and a collect it never recorded is orphaned. */
  cancel(id: string): void {
    const pact = this.pacts.get(id)!;
    this.pacts.set(id, evolve(pact, { type: 'poke', at: pact.fundBy })!);
  }

  get rail(): Rail {
    const places = this;
    const rail = {
      name: 'mock',
      async *collects(from: number) {
        places.passesFrom.push(from);
        let walked = 0;
        for (const place of places.places.filter((p) => p.position >= from)) {
          if (walked++ === places.failWalkAfter) throw new Error('the rail is gone');
          yield place;
        }
      },
      collectAt(position: number): Promise<CollectPlace> {
        places.askedAgain.push(position);
        if (places.failCollectAt) throw new Error('the rail cannot say now'); // thrown, not rejected
        return Promise.resolve(places.places.find((p) => p.position === position)?.place ?? 'none');
      },
      async payout({ key }: { key: string }) {
        if (places.failReversals) throw new Error('no payouts now');
        places.reversals.push(key);
        return { key, ref: `reversal-${places.reversals.length}` };
      },
    };
    return rail as unknown as Rail;
  }

  /** Pacts whose read fails (the read model cannot answer for them now). `others` are reconciled first. */
  readonly unreadable = new Set<string>();

  reconciler(others: [string, Rail][] = []): Reconciler {
    return new Reconciler(new Map([...others, ['mock', this.rail]]), async (pactId) => {
      if (this.unreadable.has(pactId)) throw new Error(`${pactId} cannot be read now`);
      return this.pacts.get(pactId);
    });
  }

  keyAt(index: number): string {
    return (this.places[index]!.place as { key: string }).key;
  }
}

test('collects judged for good are not kept, and the next pass reads only what came after them', async () => {
  const places = new Places();
  for (let i = 0; i < 5; i++) places.fundBoth(places.collectOfNewPact(`r${i}`), `r${i}`);
  const reconciler = places.reconciler();
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock'), { next: 9, open: new Set() });
  places.fundBoth(places.collectOfNewPact('r5'), 'r5');
  await reconciler.run();
  assert.equal(places.passesFrom, [0, 9]);
  assert.equal(places.askedAgain, []);
  assert.equal(reconciler.progressOf('mock'), { next: 11, open: new Set() });
  assert.equal(places.reversals, []);
});

test('an open collect alone is asked about again, and paid back once when it is orphaned', async () => {
  const places = new Places();
  const ids = ['r0', 'r1', 'r2'].map((receipt) => places.collectOfNewPact(receipt));
  places.fundBoth(ids[0]!, 'r0');
  places.fundBoth(ids[2]!, 'r2'); // ids[1] stays in CREATED: its buyer may still retry the fund
  const reconciler = places.reconciler();
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock'), { next: 5, open: new Set([2]) });

  await reconciler.run();
  assert.equal(places.askedAgain, [2]);
  places.cancel(ids[1]!);
  await reconciler.run();
  assert.equal(places.reversals, [`${places.keyAt(1)}:reversal`]);
  assert.equal(reconciler.progressOf('mock'), { next: 5, open: new Set() });
  await reconciler.run();
  assert.equal(places.askedAgain, [2, 2]);
  assert.equal(places.passesFrom, [0, 5, 5, 5]);
  assert.is(places.reversals.length, 1, 'paid back once');
});

test('a collect orphaned beyond an open one is paid back once', async () => {
  const places = new Places();
  const open = places.collectOfNewPact('r0');
  const orphaned = places.collectOfNewPact('r1');
  places.cancel(orphaned);
  const reconciler = places.reconciler();
  await reconciler.run();
  await reconciler.run();
  assert.equal(places.reversals, [`${places.keyAt(1)}:reversal`]);
  places.cancel(open);
  await reconciler.run();
  await reconciler.run();
  assert.equal(places.reversals, [`${places.keyAt(1)}:reversal`, `${places.keyAt(0)}:reversal`]);
});

test('a reversal that fails stays open and is made on a later pass', async () => {
  const places = new Places();
  places.cancel(places.collectOfNewPact('r0'));
  places.failReversals = true;
  const reconciler = places.reconciler();
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock').open, new Set([0]));
  places.failReversals = false;
  await reconciler.run();
  await reconciler.run();
  assert.equal(places.reversals, [`${places.keyAt(0)}:reversal`]);
  assert.equal(reconciler.progressOf('mock').open, new Set());
});

test('a place the rail cannot judge yet stays open until it can', async () => {
  const places = new Places();
  const position = places.undetermined();
  places.fundBoth(places.collectOfNewPact('r1'), 'r1');
  const reconciler = places.reconciler();
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock'), { next: 3, open: new Set([position]) });
  places.places[0] = { position, place: 'none' };
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock'), { next: 3, open: new Set() });
});

test('a collect of a pact the read model does not show yet stays open', async () => {
  const places = new Places();
  const id = places.collectOfNewPact('r0');
  const shown = places.pacts.get(id)!;
  places.pacts.delete(id);
  const reconciler = places.reconciler();
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock').open, new Set([0]));
  places.pacts.set(id, shown);
  places.fundBoth(id, 'r0');
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock').open, new Set());
});

test('a walk that fails keeps what it judged and goes on from there', async () => {
  const places = new Places();
  for (let i = 0; i < 4; i++) places.cancel(places.collectOfNewPact(`r${i}`));
  places.failWalkAfter = 2;
  const reconciler = places.reconciler();
  await reconciler.run();
  assert.equal(reconciler.progressOf('mock').next, 3);
  assert.is(places.reversals.length, 2);
  places.failWalkAfter = Infinity;
  await reconciler.run();
  assert.equal(places.passesFrom, [0, 3]);
  assert.equal(places.reversals, [0, 1, 2, 3].map((i) => `${places.keyAt(i)}:reversal`));
});

test('a place that cannot be judged now stays open and holds up no other, and no other rail', async () => {
  const places = new Places();
  const ids = ['r0', 'r1', 'r2'].map((receipt) => places.collectOfNewPact(receipt));
  for (const id of ids) places.cancel(id);
  places.unreadable.add(ids[0]!);
  const other = new Places();
  other.cancel(other.collectOfNewPact('o0'));
  other.failWalkAfter = 0;
  const reconciler = places.reconciler([['credit', { ...other.rail, name: 'credit' }]]);
  await reconciler.run();
  assert.equal(places.reversals, [1, 2].map((i) => `${places.keyAt(i)}:reversal`));
  assert.equal(reconciler.progressOf('mock'), { next: 5, open: new Set([0]) });
  places.unreadable.clear();
  await reconciler.run();
  assert.equal(places.reversals, [1, 2, 0].map((i) => `${places.keyAt(i)}:reversal`));
  assert.equal(reconciler.progressOf('mock').open, new Set());
});

test('an open place the rail cannot read again now stays open, and the new places are still read', async () => {
  const places = new Places();
  const open = places.collectOfNewPact('r0');
  const reconciler = places.reconciler();
  await reconciler.run();
  places.failCollectAt = true;
  places.cancel(places.collectOfNewPact('r1'));
  await reconciler.run();
  assert.equal(places.reversals, [`${places.keyAt(1)}:reversal`]);
  assert.equal(reconciler.progressOf('mock'), { next: 3, open: new Set([0]) });
  places.failCollectAt = false;
  places.cancel(open);
  await reconciler.run();
  assert.equal(places.reversals, [1, 0].map((i) => `${places.keyAt(i)}:reversal`));
});

test.run();
