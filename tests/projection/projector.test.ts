import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Journal } from '../../actors/journal.js';
import { connectNats } from '../../actors/nats.js';
import { Projector } from '../../projection/projector.js';
import { ReadModel, type PactRecord } from '../../projection/read-model.js';
import { generateKeyPair } from '../../protocol/sign.js';
import { startNatsServer } from '../../runtime/nats-server.js';
import { openLevel } from '../../storage/level.js';
import { pactFrom, twoPartySpec } from '../support/pacts.js';

async function within<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`not within ${ms} ms`)), ms)));
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** A read model whose next write fails, as a full disk would make it. */
class FailingOnce extends ReadModel {
  failures = 1;
  override async putAll(records: PactRecord[], seq: number): Promise<void> {
    if (this.failures-- > 0) throw new Error('disk full');
    return super.putAll(records, seq);
  }
}

test('a write the read model could not make is retried; the projector never moves past it', async () => {
  const root = mkdtempSync(join(tmpdir(), 'pact-projector-'));
  const server = await startNatsServer(join(root, 'nats'));
  const nats = await connectNats({ url: server.url });
  const level = await openLevel(join(root, 'level'));
  const projector = new Projector(nats, new FailingOnce(level), 'test-node');
  try {
    const journal = new Journal(nats.js, nats.jsm);
    const pact = { ...pactFrom(twoPartySpec(generateKeyPair(), generateKeyPair())), id: `p_${'ef'.repeat(16)}` };
    const seq = await journal.append({ pactId: pact.id, nonce: 0, commandId: 'c1', event: { type: 'created', at: 1, pact } }, 0);
    await within(projector.start(), 10_000); // start waits until the journal's last entry is in the read model
    const readModel = new ReadModel(level);
    assert.is((await readModel.get(pact.id))?.id, pact.id);
    assert.is(await readModel.checkpoint(), seq);
  } finally {
    await projector.stop();
    await nats.nc.close();
    await level.close();
    await server.stop();
    rmSync(root, { recursive: true, force: true });
  }
});

test.run();
