import { collectStanding, parseCollectKey } from '../machines/pact/collects.js';
import type { Pact } from '../machines/pact/types.js';
import type { Collected, CollectPlace, Rail } from '../rails/rail.js';
import { PeriodicPass } from './periodic-pass.js';

/** How far a rail's collects are read (`next`), and the places read but not judged for good yet (`open`). */
export interface ReconcilerProgress {
  next: number;
  open: ReadonlySet<number>;
}

/**
 * Finds collects that no pact recorded (the process died between the rail and the journal, and the payer
 * never retried) and pays them back under the key `<collectKey>:reversal`, once the pact can no longer
 * record them. Pacts are read from the read model, which only ever moves forward, so a collect judged
 * orphaned stays orphaned.
 *
 * Each pass asks a rail again about the places it left open, then reads the places made since the last pass.
 * What it keeps, and what a pass reads, grows with the collects still open (a pact waiting for its funds, a
 * reversal that failed, a rail that cannot tell yet), not with all a rail ever collected. The positions live
 * in memory: after a restart the first pass reads every place once (a reversal is keyed, so it is never
 * made twice).
 */
export class Reconciler extends PeriodicPass {
  private readonly progress = new Map<string, { next: number; open: Set<number> }>();

  constructor(
    private readonly rails: ReadonlyMap<string, Rail>,
    private readonly pactOf: (pactId: string) => Promise<Pact | undefined>,
  ) {
    super('reconciliation');
  }

  /** Where a rail's next pass starts reading, and the places it asks about again (for tests). */
  progressOf(rail: string): ReconcilerProgress {
    return this.progress.get(rail) ?? { next: 0, open: new Set() };
  }

  /** One pass over every rail (one whose walk fails does not hold up the others); resolves to the number of collects paid back. */
  protected async pass(): Promise<number> {
    let reversed = 0;
    for (const rail of this.rails.values()) {
      try {
        reversed += await this.passOver(rail);
      } catch (error) {
        console.error(`reconciliation of the ${rail.name} rail stopped; the next pass goes on from there:`, String(error));
      }
    }
    return reversed;
  }

  private async passOver(rail: Rail): Promise<number> {
    let progress = this.progress.get(rail.name);
    if (!progress) this.progress.set(rail.name, (progress = { next: 0, open: new Set() }));
    let reversed = 0;
    /** Judges one place; one that cannot be judged now (a read that fails) stays open and holds up no other. */
    const judgeAt = async (position: number, place: () => Promise<CollectPlace>) => {
      const judgement = await Promise.resolve()
        .then(place)
        .then((known) => this.judge(rail, known))
        .catch((error: unknown) => {
          console.error(`reconciliation of place ${position} of the ${rail.name} rail failed; the next pass asks again:`, String(error));
          return 'open' as const;
        });
      if (judgement === 'reversed') reversed++;
      if (judgement === 'open') progress.open.add(position);
      else progress.open.delete(position);
    };
    for (const position of [...progress.open]) await judgeAt(position, () => rail.collectAt(position));
    for await (const { position, place } of rail.collects(progress.next)) {
      await judgeAt(position, async () => place);
      progress.next = position + 1;
    }
    return reversed;
  }

  /** `open` until no fund can record the collect any more (or its reversal failed); then for good. */
  private async judge(rail: Rail, place: CollectPlace): Promise<'open' | 'done' | 'reversed'> {
    if (place === 'none') return 'done';
    if (place === 'undetermined') return 'open';
    return this.judgeCollect(rail, place);
  }

  private async judgeCollect(rail: Rail, collect: Collected): Promise<'open' | 'done' | 'reversed'> {
    const parsed = parseCollectKey(collect.key);
    if (!parsed) return 'done'; // no pact's collect (a wallet checkout's, say): no pact can owe it back
    const pact = await this.pactOf(parsed.pactId);
    if (!pact) return 'open'; // the read model does not show it yet
    const standing = collectStanding(pact, parsed.round, parsed.party, collect.ref);
    if (standing !== 'orphaned') return standing === 'open' ? 'open' : 'done';
    try {
      await rail.payout({ key: `${collect.key}:reversal`, pactId: pact.id, payee: collect.payer, amount: collect.amount, purpose: 'refund', reverses: collect.ref });
      return 'reversed';
    } catch (error) {
      console.error(`reversal of ${collect.key} failed; next pass tries again:`, String(error));
      return 'open';
    }
  }
}
