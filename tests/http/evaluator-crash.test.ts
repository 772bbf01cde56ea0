// kill -9 of the server while the evaluator waits on its model, then a restart: the dispute is judged again
// and exactly one verdict is applied.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runAudit } from '../support/audit.js';
import { afterDispute, disputeWith, journalOf, payoutsBy } from '../support/disputes.js';
import { startModelServer } from '../support/model-servers.js';
import { Stack } from '../support/stack.js';

test('a crash mid-evaluation, then a restart, applies exactly one verdict', async () => {
  const model = await startModelServer('openai', { kind: 'hang' });
  const keyFile = join(mkdtempSync(join(tmpdir(), 'pact-model-key-')), 'key');
  writeFileSync(keyFile, 'sk-crash-test\n');
  const stack = await Stack.start({
    env: { PACT_EVALUATOR_MODE: 'openai', PACT_EVALUATOR_URL: model.url, PACT_EVALUATOR_API_KEY_FILE: keyFile, PACT_EVALUATOR_MODEL: 'judge-1' },
  });
  try {
    const { seller, buyer, id } = await disputeWith(stack, [{ text: 'the delivery' }]);
    const deadline = Date.now() + 15_000;
    while (model.requests.length === 0) {
      if (Date.now() > deadline) assert.unreachable(`the evaluator never asked the model:\n${stack.serverLog()}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    await stack.kill('SIGKILL');
    model.set({ kind: 'verdict', judgement: () => ({ distribution: [{ party: seller.party, bp: 10000 }], feeFrom: 'objector', reason: 'delivered' }) });
    await stack.startServer();

    const pact = await afterDispute(stack, id);
    assert.is(pact.state, 'SETTLED');
    assert.is(pact.settlement?.outcome, 'settled_by_verdict');
    assert.ok(model.requests.length >= 2, 'judged again after the restart');
    assert.equal(payoutsBy(await stack.settledPayouts(id), seller), { 'pot:seller': '1001', 'bond:seller': '50', 'fee:fee': '75' });
    const verdicts = (await journalOf(stack, id)).filter((entry) => entry.event.type === 'verdict');
    assert.is(verdicts.length, 1);
    const audit = await runAudit(stack.natsUrl, id);
    assert.is(audit.code, 0, audit.output);
    void buyer;
  } finally {
    await stack.stop();
    await model.close();
  }
});

test.run();
