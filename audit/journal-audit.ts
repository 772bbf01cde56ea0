import type { JournalEntry } from '../actors/journal.js';
import type { Pact } from '../machines/pact/types.js';
import { checkEntry } from './check-entry.js';

interface PactAudit {
  pact: Pact | undefined;
  entries: number;
  signed: number;
  problems: string[];
}

/**
 * Follows journal entries in order, pact by pact. After the first entry of a pact that does not hold, the
 * rest of that pact cannot be judged (its record is unknown), so they are counted, not checked.
 */
export class JournalAudit {
  private readonly pacts = new Map<string, PactAudit>();
  private readonly strays: string[] = [];

  add(seq: number, entry: JournalEntry | undefined): void {
    if (!entry || typeof entry.pactId !== 'string') {
      this.strays.push(`journal message ${seq} is not an entry`);
      return;
    }
    const audit = this.pacts.get(entry.pactId) ?? { pact: undefined, entries: 0, signed: 0, problems: [] };
    this.pacts.set(entry.pactId, audit);
    audit.entries++;
    if (audit.problems.length > 0) return;
    const checked = checkEntry(audit.pact, entry);
    if ('problem' in checked) {
      audit.problems.push(`entry ${seq} (nonce ${entry.nonce}, ${entry.event?.type}): ${checked.problem}`);
      return;
    }
    audit.pact = checked.pact;
    if (checked.signedBy) audit.signed++;
  }

  /** Pacts made by an offer acceptance that hold so far, with their offer: the offers' journal must show the acceptance. */
  offerPacts(): { pactId: string; offerId: string }[] {
    return [...this.pacts].flatMap(([pactId, audit]) =>
      audit.pact?.sourceOffer && audit.problems.length === 0 ? [{ pactId, offerId: audit.pact.sourceOffer.id }] : [],
    );
  }

  /** A problem found outside the pact's own journal. */
  fail(pactId: string, problem: string): void {
    this.pacts.get(pactId)?.problems.push(problem);
  }

  get failed(): boolean {
    return this.strays.length > 0 || [...this.pacts.values()].some((a) => a.problems.length > 0);
  }

  report(): string[] {
    const lines = [...this.strays];
    let entries = 0;
    let signatures = 0;
    for (const [pactId, audit] of this.pacts) {
      entries += audit.entries;
      signatures += audit.signed;
      if (audit.problems.length > 0) lines.push(`FAIL ${pactId}: ${audit.problems.join('; ')}`);
    }
    const failed = [...this.pacts.values()].filter((a) => a.problems.length > 0).length;
    lines.push(`${this.pacts.size} pacts, ${entries} entries, ${signatures} signatures verified, ${failed} pacts failed`);
    return lines;
  }
}
