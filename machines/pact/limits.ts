// Limits that bound every pact's size, so that its ways out (withdraw, the deadline pokes, mutual cancel)
// always fit in a journal entry and apply. The gateway's schemas bound each call; these bound what a pact
// accumulates. docs/API.md lists them all.

/**
 * A party may fund a pact this many times (withdrawing in between); once it has withdrawn from every round,
 * a fund is refused (409 funding_rounds_exhausted). Withdrawing itself is never refused for it. Without a
 * bound, fund/withdraw cycles grow the pact's payout history without end.
 */
export const MAX_FUNDING_ROUNDS = 5;

/** What a pact keeps of its creator's terms and its proposal, in bytes of their JSON (UTF-8). */
export const MAX_TERMS_BYTES = 65_536;
export const MAX_PROPOSAL_BYTES = 65_536;

const jsonByteLength = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).length;

/** Which part of a call is larger than the pact may keep, with its limit; undefined when all fit. */
export function oversizedPart(action: string, call: unknown): { field: string; limit: number } | undefined {
  if (action === 'pacts.create' && jsonByteLength((call as { terms?: unknown }).terms ?? null) > MAX_TERMS_BYTES) {
    return { field: 'call.terms', limit: MAX_TERMS_BYTES };
  }
  if (action === 'pacts.propose' && jsonByteLength(call) > MAX_PROPOSAL_BYTES) return { field: 'call', limit: MAX_PROPOSAL_BYTES };
  return undefined;
}
