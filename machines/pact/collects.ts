import { isPartyId, type PartyId } from '../../protocol/party.js';
import type { Pact, PactParty } from './types.js';

// A party pays into escrow once per funding round; its `withdrawals` count names the round. The rail's
// collect is keyed by round, so a retried fund never collects twice, and a collect the pact never
// recorded (the process died between the rail and the journal) can be recognised and reversed.

export const collectKey = (pactId: string, party: PactParty): string =>
  `${pactId}:fund.${party.withdrawals}:${party.party}`;

export function parseCollectKey(key: string): { pactId: string; round: number; party: PartyId } | undefined {
  const match = /^(p_[0-9a-f]+):fund\.(\d+):(.+)$/.exec(key);
  if (!match || !isPartyId(match[3])) return undefined;
  return { pactId: match[1]!, round: Number(match[2]), party: match[3] };
}

/**
 * What became of a collect: `accounted` when the pact holds or has paid back that money, `open` while the
 * party may still retry the fund that made it, `orphaned` when no fund can ever record it: then the
 * money must go back to the payer. A pact in CREATED never orphans a collect: the record judged may be
 * behind the journal (a read model), and in CREATED a later round may already be recorded there.
 */
export function collectStanding(pact: Pact, round: number, party: PartyId, ref: string): 'accounted' | 'open' | 'orphaned' {
  if (pact.state === 'CREATED') return 'open';
  const entry = pact.parties.find((p) => p.party === party);
  if (!entry) return 'orphaned'; // an optional party dropped at activation
  if (round < entry.withdrawals) return 'accounted'; // funded in that round, then withdrew with a refund
  return entry.confirmed && entry.receipt === ref ? 'accounted' : 'orphaned';
}
