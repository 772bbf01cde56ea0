import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { PactSummary } from '../../projection/read-model.js';
import type { KeyPair } from '../../protocol/sign.js';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// GET /pacts: the filters party, state, groupId and since combine; pages follow nextSince.

const test = suite<{ stack: Stack; seller: KeyPair; ids: { a1: string; a2: string; b1: string } }>('listing pacts');

test.before(async (context) => {
  const stack = await Stack.start();
  const { seller } = newParties();
  const create = async (groupId: string) => {
    const { buyer } = newParties();
    return (await stack.client.create(seller, tradeSpec(seller, buyer, { groupId }))).body.pact.id as string;
  };
  const ids = { a1: await create('o_a'), a2: await create('o_a'), b1: await create('o_b') };
  await stack.client.fund(seller, ids.a2); // a2 moves on; its updatedAt is now the latest
  Object.assign(context, { stack, seller, ids });
});
test.after(async ({ stack }) => {
  await stack.stop();
});

const idsOf = (pacts: PactSummary[]) => pacts.map((p) => p.id);

test('filters combine', async ({ stack, seller, ids }) => {
  const list = async (query: Record<string, string>) => idsOf((await stack.client.list(query)).body.pacts);
  assert.equal(await list({ party: seller.party }), [ids.a1, ids.b1, ids.a2]);
  assert.equal(await list({ groupId: 'o_a' }), [ids.a1, ids.a2]);
  assert.equal(await list({ groupId: 'o_a', party: seller.party, state: 'CREATED' }), [ids.a1, ids.a2]);
  assert.equal(await list({ groupId: 'o_b', state: 'ACTIVE' }), []);
  assert.equal(await list({ party: newParties().buyer.party }), []);
});

test('since is exclusive and pages follow nextSince to the end', async ({ stack, seller, ids }) => {
  const seen: string[] = [];
  let since: number | null | undefined;
  do {
    const query = { party: seller.party, limit: 1, ...(since !== undefined ? { since: since! } : {}) };
    const page = (await stack.client.list(query)).body;
    assert.ok(page.pacts.length >= 1, 'a page before the end is never empty');
    assert.ok(page.pacts.every((p) => since === undefined || p.updatedAt > since!), 'since is exclusive');
    seen.push(...idsOf(page.pacts));
    since = page.nextSince;
  } while (since !== null);
  assert.equal(seen, [ids.a1, ids.b1, ids.a2]);
});

test('a list reads its own writes', async ({ stack, seller, ids }) => {
  const funded = await stack.client.fund(seller, ids.b1);
  assert.is(funded.status, 200);
  const listed = (await stack.client.list({ groupId: 'o_b' })).body.pacts;
  assert.is(listed[0]?.stateNonce, funded.body.pact.stateNonce);
});

test('a list holds summaries: parties and deadlines, never terms, proposals or payout history', async ({ stack, seller, ids }) => {
  const [summary] = (await stack.client.list({ groupId: 'o_a', state: 'CREATED' })).body.pacts;
  const pact = (await stack.client.get(ids.a2)).body.pact;
  assert.equal(Object.keys(summary!).sort(), [
    'asset', 'closedAt', 'createdAt', 'fundBy', 'groupId', 'id', 'objectBy', 'outcome', 'parties', 'performBy',
    'proposer', 'rail', 'state', 'stateNonce', 'updatedAt', 'verdictBy',
  ]);
  assert.equal(summary!.parties.find((p) => p.party === seller.party), { party: seller.party, required: true, confirmed: summary!.id === ids.a2 });
  assert.is(summary!.id, ids.a1);
  assert.ok(pact.terms && !('terms' in summary!));
});

test.run();
