import { collectStanding, parseCollectKey } from '../machines/pact/collects.js';
import type { Pact } from '../machines/pact/types.js';
import type { Collected, Rail } from '../rails/rail.js';
import { PeriodicPass } from './periodic-pass.js';

/** How far a rail's collects are judged for good: all before `position`, and those of `judged` at or after it. */
export interface ReconcilerProgress {
  position: number;
  judged: ReadonlySet<string>;
}

/** A collect judged now: `open` until no fund can record it any more (or its reversal failed), then for good. */
type Judgement = 'open' | 'kept' | 'reversed';

/**
 * Finds collects that no pact recorded (the process died between the rail and the journal, and the payer
 * never retried) and pays them back under the key `<collectKey>:reversal`, once the pact can no longer
 * record them. Pacts are read from the read model, which only ever moves forward, so a collect judged
 * orphaned stays orphaned.
 *
 * Each pass walks a rail's collects from the first one not judged for good. A collect judged past it is
 * remembered by key until every collect before it is judged too, then only the position is: what the
 * reconciler keeps, and what a pass reads, grows with the collects made since the oldest open one (a pact
 * waiting for its funds: days at most, as every CREATED pact has a fund deadline), not with all a rail ever
 * collected. A collect of a pact the read model does not show is open: it holds the position until it shows.
 */
export class Reconciler extends PeriodicPass {
  private readonly progress = new Map<string, { position: number; judged: Set<string> }>();

  constructor(
    private readonly rails: ReadonlyMap<string, Rail>,
    private readonly pactOf: (pactId: string) => Promise<Pact | undefined>,
  ) {
    super('reconciliation');
  }

  /** Where each rail's next pass starts, and what it remembers beyond (for tests and operators). */
  progressOf(rail: string): ReconcilerProgress {
    return this.progress.get(rail) ?? { position: 0, judged: new Set() };
  }

  /** One pass over every rail; resolves to the number of collects paid back. */
  protected async pass(): Promise<number> {
    let reversed = 0;
    for (const rail of this.rails.values()) reversed += await this.passOver(rail);
    return reversed;
  }

  private async passOver(rail: Rail): Promise<number> {
    let progress = this.progress.get(rail.name);
    if (!progress) this.progress.set(rail.name, (progress = { position: 0, judged: new Set() }));
    let reversed = 0;
    let allJudgedSoFar = true;
    for await (const { position, collect } of rail.collects(progress.position)) {
      const judgement = collect && (progress.judged.has(collect.key) ? 'kept' : await this.judge(rail, collect));
      if (judgement === 'reversed') reversed++;
      if (!collect || judgement === 'open') {
        allJudgedSoFar = false;
      } else if (allJudgedSoFar) {
        progress.position = position + 1;
        progress.judged.delete(collect.key);
      } else {
        progress.judged.add(collect.key);
      }
    }
    return reversed;
  }

  private async judge(rail: Rail, collect: Collected): Promise<Judgement> {
    const parsed = parseCollectKey(collect.key);
    if (!parsed) return 'kept'; // no pact's collect (only the mock's test hook makes those): no pact can owe it back
    const pact = await this.pactOf(parsed.pactId);
    if (!pact) return 'open';
    const standing = collectStanding(pact, parsed.round, parsed.party, collect.ref);
    if (standing !== 'orphaned') return standing === 'open' ? 'open' : 'kept';
    try {
      await rail.payout({ key: `${collect.key}:reversal`, pactId: pact.id, payee: collect.payer, amount: collect.amount, purpose: 'refund', reverses: collect.ref });
      return 'reversed';
    } catch (error) {
      console.error(`reversal of ${collect.key} failed; next pass tries again:`, String(error));
      return 'open';
    }
  }
}
