import * as assert from 'uvu/assert';
import { Journal, type JournalEntry } from '../../actors/journal.js';
import { connectClient } from '../../actors/nats.js';
import type { EvidenceItem, Pact } from '../../machines/pact/types.js';
import type { KeyPair } from '../../protocol/sign.js';
import type { Stack } from './stack.js';
import { activePact } from './trades.js';

/** Evidence as a test names it: text becomes a blob uploaded by the seller. */
export type TestEvidence = { text: string } | EvidenceItem;

/**
 * An active trade in which the seller proposes the whole pot for itself with `evidence` and the buyer
 * objects: DISPUTED, for the evaluator to judge.
 */
export async function disputeWith(stack: Stack, evidence: TestEvidence[], reason = 'the summary is 900 words, not 500') {
  const parties = await activePact(stack);
  const { seller, buyer, id } = parties;
  const items: EvidenceItem[] = [];
  for (const item of evidence) {
    if (!('text' in item)) {
      items.push(item);
      continue;
    }
    const put = await stack.client.putBlob(seller, id, new TextEncoder().encode(item.text));
    assert.is(put.status, 200, JSON.stringify(put.body));
    items.push({ blob: put.body.hash, note: 'the delivery' });
  }
  const proposed = await stack.client.propose(seller, id, { evidence: items, distribution: [{ party: seller.party, bp: 10000 }] });
  assert.is(proposed.status, 200, JSON.stringify(proposed.body));
  const disputed = await stack.client.object(buyer, id, reason);
  assert.is(disputed.body.pact.state, 'DISPUTED', JSON.stringify(disputed.body));
  return { ...parties, inputHash: disputed.body.pact.inputHash as string };
}

/** Waits until the pact has left DISPUTED (the evaluator acts on its own), and returns it. */
export async function afterDispute(stack: Stack, pactId: string, timeoutMs = 20_000): Promise<Pact> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pact = (await stack.client.get(pactId)).body.pact;
    if (pact.state !== 'DISPUTED') return pact;
    if (Date.now() > deadline) throw new Error(`pact ${pactId} is still DISPUTED:\n${stack.serverLog().slice(-3000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** The journal entries of one pact, read from NATS. */
export async function journalOf(stack: Stack, pactId: string): Promise<JournalEntry[]> {
  const nats = await connectClient(stack.natsUrl, undefined, 'reader');
  try {
    return (await new Journal(nats.publisher, nats.jsm).entriesFrom(pactId, 0)).map((e) => e.value);
  } finally {
    await nats.nc.close();
  }
}

/** Payouts by kind and by whom: seller, buyer, or the fee recipient. */
export function payoutsBy(pact: Pact, seller: KeyPair): Record<string, string> {
  const who = (party: string) => (party === seller.party ? 'seller' : party === pact.arbitrationFeeRecipient ? 'fee' : 'buyer');
  const lines: Record<string, bigint> = {};
  for (const p of pact.payouts) {
    const key = `${p.kind}:${who(p.party)}`;
    lines[key] = (lines[key] ?? 0n) + BigInt(p.amount);
  }
  return Object.fromEntries(Object.entries(lines).map(([key, amount]) => [key, amount.toString()]));
}
