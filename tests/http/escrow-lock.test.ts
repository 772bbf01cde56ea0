import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { MAX_FUNDING_ROUNDS } from '../../machines/pact/limits.js';
import type { Pact } from '../../machines/pact/types.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { threePartySpec } from '../support/pacts.js';
import { Stack } from '../support/stack.js';

// The attack that locked escrow: one party of a 3-party pact cycles fund/withdraw to grow the pact until
// nothing could be appended, so the others' withdraw and the fund-deadline refund failed for ever. Now the
// cycles end, and the others' ways out still apply. Real server, real NATS and LevelDB.

const HOUR = 3_600_000;
const test = suite<{ stack: Stack }>('no party can lock another’s escrow');

test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack.stop();
});

test('fund/withdraw cycles end, and the victim can still withdraw; the fund deadline still cancels', async ({ stack }) => {
  const [a, b, mallory] = [generateKeyPair(), generateKeyPair(), generateKeyPair()];
  const created = await stack.client.create(a, threePartySpec(a, b, mallory));
  assert.is(created.status, 200, JSON.stringify(created.body));
  const id = created.body.pact.id as string;
  assert.is((await stack.client.fund(b, id)).status, 200, 'the victim has money in');

  for (let round = 0; round < MAX_FUNDING_ROUNDS; round++) {
    assert.is((await stack.client.fund(mallory, id)).status, 200, `fund ${round}`);
    assert.is((await stack.client.withdraw(mallory, id)).status, 200, `withdraw ${round}`);
    await stack.settledPayouts(id); // the recorded refund moves the nonce: fund again after it
  }
  const again = await stack.client.fund(mallory, id);
  assert.is(again.status, 409, JSON.stringify(again.body));
  assert.is((again.body as any).error, 'funding_rounds_exhausted');

  const withdrawn = await stack.client.withdraw(b, id);
  assert.is(withdrawn.status, 200, 'b withdraws');
  await stack.advanceClock(24 * HOUR);
  const pact = (await stack.client.get(id)).body.pact as Pact;
  assert.is(pact.state, 'CANCELLED', 'the fund deadline cancels');
  const paid = await stack.settledPayouts(id);
  const refundedTo = (party: string) => paid.payouts.filter((p) => p.party === party).reduce((sum, p) => sum + BigInt(p.amount), 0n);
  assert.is(refundedTo(b.party), 670n, 'b got deposit and bond back');
  assert.is(refundedTo(mallory.party), 430n * BigInt(MAX_FUNDING_ROUNDS), 'mallory got back exactly what it paid in');
});

test.run();
