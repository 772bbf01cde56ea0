import { collectStanding, parseCollectKey } from '../machines/pact/collects.js';
import type { Pact } from '../machines/pact/types.js';
import type { Rail } from '../rails/rail.js';
import { PeriodicPass } from './periodic-pass.js';

/**
 * Finds collects that no pact recorded (the process died between the rail and the journal, and the payer
 * never retried) and pays them back under the key `<collectKey>:reversal`, once the pact can no longer
 * record them. Pacts are read from the read model, which only ever moves forward, so a collect judged
 * orphaned stays orphaned.
 */
export class Reconciler extends PeriodicPass {
  private readonly done = new Set<string>();

  constructor(
    private readonly rails: ReadonlyMap<string, Rail>,
    private readonly pactOf: (pactId: string) => Promise<Pact | undefined>,
  ) {
    super('reconciliation');
  }

  /** One pass over every rail; resolves to the number of collects paid back. */
  protected async pass(): Promise<number> {
    let reversed = 0;
    for (const rail of this.rails.values()) {
      for await (const collect of rail.collects()) {
        if (this.done.has(collect.key)) continue;
        const parsed = parseCollectKey(collect.key);
        const pact = parsed && (await this.pactOf(parsed.pactId));
        if (!parsed || !pact) continue;
        const standing = collectStanding(pact, parsed.round, parsed.party, collect.ref);
        if (standing === 'open') continue;
        if (standing === 'orphaned') {
          try {
            await rail.payout({ key: `${collect.key}:reversal`, pactId: pact.id, payee: collect.payer, amount: collect.amount, purpose: 'refund', reverses: collect.ref });
          } catch (error) {
            console.error(`reversal of ${collect.key} failed; next pass tries again:`, String(error));
            continue;
          }
          reversed++;
        }
        this.done.add(collect.key);
      }
    }
    return reversed;
  }
}
