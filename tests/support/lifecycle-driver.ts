import * as assert from 'uvu/assert';
import type { Pact, PactState } from '../../machines/pact/types.js';
import type { KeyPair } from '../../protocol/sign.js';
import { newParties, tradeSpec } from './parties.js';
import { twoPartySpec, type TwoPartyAmounts } from './pacts.js';
import type { Stack } from './stack.js';

// Drives trade lifecycles (fund, fund, propose, cosign) step by step, remembering the furthest state the
// server acknowledged, so that failure tests can check that nothing acknowledged was lost.

const ORDER: PactState[] = ['CREATED', 'ACTIVE', 'PROPOSED', 'SETTLED'];
/** What every settled trade pays out: the buyer's deposit 1001 and both bonds, 50 and 75. */
const TRADE_TOTAL = 1001n + 50n + 75n;

export interface Tracked {
  seller: KeyPair;
  buyer: KeyPair;
  id: string;
  acked: { nonce: number; state: PactState };
  /** The last refusal or error a step met, for failure messages. */
  lastProblem?: string;
}

export type Ledger = Awaited<ReturnType<Stack['ledger']>>;

function record(t: Tracked, pact: Pact): void {
  if (pact.stateNonce > t.acked.nonce) t.acked = { nonce: pact.stateNonce, state: pact.state };
}

/** Creates a trade (`amounts` changes its money); undefined when the server did not accept it (or is gone). */
export async function startTrade(stack: Stack, amounts?: TwoPartyAmounts): Promise<Tracked | undefined> {
  const { seller, buyer } = newParties();
  const spec = amounts ? twoPartySpec(seller, buyer, {}, amounts) : tradeSpec(seller, buyer);
  try {
    const created = await stack.client.create(seller, spec);
    if (created.status !== 200) return undefined;
    return { seller, buyer, id: created.body.pact.id, acked: { nonce: 0, state: 'CREATED' } };
  } catch {
    return undefined;
  }
}

/**
 * Runs the next step of a trade from the state the server shows now (so a step whose answer was lost is
 * not repeated blindly); resolves false when the server could not be reached.
 */
export async function step(stack: Stack, t: Tracked): Promise<boolean> {
  const c = stack.client;
  const distribution = [{ party: t.seller.party, bp: 6000 }, { party: t.buyer.party, bp: 4000 }];
  try {
    const pact = (await c.get(t.id)).body.pact as Pact;
    record(t, pact); // a read shows only journaled state, so it must survive a failure too
    if (pact.state === 'SETTLED') return true;
    const result =
      pact.state === 'CREATED'
        ? await c.fund(pact.parties[0]!.confirmed ? t.buyer : t.seller, t.id)
        : pact.state === 'ACTIVE'
          ? await c.propose(t.seller, t.id, { evidence: [{ note: 'done' }], distribution })
          : await c.cosign(t.buyer, t.id);
    if (result.status === 200) record(t, result.body.pact);
    else t.lastProblem = `${pact.state}@${pact.stateNonce}: ${result.status} ${JSON.stringify(result.body)}`;
    return true;
  } catch (error) {
    t.lastProblem = String(error);
    return false;
  }
}

export async function assertNothingAcknowledgedLost(stack: Stack, tracked: Iterable<Tracked>): Promise<void> {
  for (const t of tracked) {
    const { status, body } = await stack.client.get(t.id);
    assert.is(status, 200, `pact ${t.id} is gone`);
    const pact = body.pact as Pact;
    assert.ok(pact.stateNonce >= t.acked.nonce, `${t.id}: nonce ${pact.stateNonce} < acknowledged ${t.acked.nonce}`);
    assert.ok(ORDER.indexOf(pact.state) >= ORDER.indexOf(t.acked.state), `${t.id}: ${pact.state} is before ${t.acked.state}`);
  }
}

/**
 * Pushes every trade to SETTLED within `withinMs` each; a step that made no progress (a 503 while the
 * cluster elects a leader, say) is tried again after a short pause.
 */
export async function finishAll(stack: Stack, tracked: Iterable<Tracked>, withinMs = 10_000): Promise<void> {
  for (const t of tracked) {
    const deadline = Date.now() + withinMs;
    while (t.acked.state !== 'SETTLED' && Date.now() < deadline) {
      const before = t.acked.nonce;
      await step(stack, t);
      if (t.acked.nonce === before) await new Promise((resolve) => setTimeout(resolve, 200));
    }
    assert.is(t.acked.state, 'SETTLED', `${t.id} could not finish; last: ${t.lastProblem}`);
  }
}

/** Every trade paid out in full, each payout key paid exactly once, and nothing left in escrow. */
export async function assertPaidExactlyOnce(stack: Stack, tracked: Iterable<Tracked>): Promise<void> {
  await stack.payoutsIdle(30_000);
  const ledger = await stack.ledger();
  const paidByKey = new Map<string, number>();
  for (const op of ledger.operations) if (op.kind === 'payout') paidByKey.set(op.key, (paidByKey.get(op.key) ?? 0) + 1);
  for (const t of tracked) {
    const pact = (await stack.client.get(t.id)).body.pact as Pact;
    assert.ok(pact.payouts.every((p) => p.status === 'paid'), `${t.id} has unpaid payouts`);
    const paidOut = pact.payouts.reduce((sum, p) => sum + BigInt(p.amount), 0n);
    assert.is(paidOut, TRADE_TOTAL, `${t.id} paid out ${paidOut}`);
    for (const payout of pact.payouts) assert.is(paidByKey.get(payout.key), 1, `${payout.key} paid ${paidByKey.get(payout.key)} times`);
  }
  const total = (kind: string) => ledger.operations.filter((op) => op.kind === kind).reduce((s, op) => s + BigInt(op.amount), 0n);
  assert.is(total('collect'), total('payout'), 'escrow keeps nothing once every pact settled');
}
