import { join } from 'node:path';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { afterDispute, disputeWith } from '../support/disputes.js';
import { Stack } from '../support/stack.js';
import { until } from '../support/until.js';

// Two service processes on one NATS, both judging disputes (sandbox) with the same pinned evaluator key. The
// first holds every partition's lease; its projector tells its evaluator of each dispute, and the second,
// which holds none, judges none (before, the nodes shared one journal consumer, and either might judge).

const test = suite<{ first: Stack; second: Stack }>('two judging nodes');
const JUDGING = { PACT_EVALUATOR_MODE: 'sandbox' };

test.before(async (context) => {
  context.first = await Stack.start({ env: JUDGING });
  const sameKey = { PACT_EVALUATOR_KEY_FILE: join(context.first.root, 'evaluator.seed') };
  context.second = await Stack.start({ natsUrl: context.first.natsUrl, env: { ...JUDGING, ...sameKey } });
});
test.after(async ({ first, second }) => {
  await second.stop();
  await first.stop();
});

test('each dispute is judged once, by the node whose host holds its partition', async ({ first, second }) => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await disputeWith(first, [{ note: `delivered ${i}` }])).id);
  for (const id of ids) {
    const pact = await afterDispute(first, id);
    assert.is(pact.settlement?.outcome, 'settled_by_verdict', JSON.stringify(pact.settlement));
    await until(() => first.serverLog().includes(`pact ${id}: verdict applied`), 'the holder judged it');
  }
  for (const id of ids) assert.not.ok(second.serverLog().includes(`pact ${id}:`), `the other node judged ${id} too`);
});

test.run();
