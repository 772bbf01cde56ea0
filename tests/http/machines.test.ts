import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { newParties, tradeSpec } from '../support/parties.js';
import { Stack } from '../support/stack.js';

// The live journal of a pact (GET /machines/pacts/:id/journal) over plain HTTP: resuming after a sequence,
// the cap per client and its release when a view goes, and a node that shuts down with views open.
// tests/browser/machines.test.ts follows it in Chromium.

const test = suite<{ stack: Stack; pactId: string }>('live journal');
test.before(async (context) => {
  context.stack = await Stack.start();
  const { seller, buyer } = newParties();
  const created = await context.stack.client.create(seller, tradeSpec(seller, buyer));
  context.pactId = created.body.pact.id;
  assert.is((await context.stack.client.fund(buyer, context.pactId)).status, 200);
  assert.is((await context.stack.client.fund(seller, context.pactId)).status, 200);
});
test.after(async ({ stack }) => {
  await stack?.stop();
});

interface View {
  status: number;
  /** The `id`s of the events read so far. */
  ids: number[];
  /** Reads on until `count` events in all have come (or the stream ended). */
  readUntil(count: number): Promise<number[]>;
  close(): void;
}

/** Opens the journal stream and reads its first `count` events (none for a refusal). */
async function view(stack: Stack, pactId: string, count: number, headers: Record<string, string> = {}): Promise<View> {
  const controller = new AbortController();
  const response = await fetch(`${stack.url}/machines/pacts/${pactId}/journal`, { headers, signal: controller.signal });
  const ids: number[] = [];
  const reader = response.status === 200 ? response.body!.getReader() : undefined;
  if (!reader) await response.arrayBuffer();
  let text = '';
  const readUntil = async (wanted: number) => {
    while (reader && ids.length < wanted) {
      const { value, done } = await reader.read();
      if (done) break;
      text += new TextDecoder().decode(value);
      ids.splice(0, ids.length, ...[...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1])));
    }
    return ids;
  };
  await readUntil(count);
  return { status: response.status, ids, readUntil, close: () => controller.abort() };
}

test('the journal streams every entry in order; Last-Event-ID (or ?after) resumes after one', async ({ stack, pactId }) => {
  const all = await view(stack, pactId, 3);
  all.close();
  assert.is(all.status, 200);
  assert.is(all.ids.length, 3);
  assert.ok(all.ids[0]! < all.ids[1]! && all.ids[1]! < all.ids[2]!);
  const resumed = await view(stack, pactId, 2, { 'last-event-id': String(all.ids[0]) });
  resumed.close();
  assert.equal(resumed.ids, all.ids.slice(1));
  const byQuery = await fetch(`${stack.url}/machines/pacts/${pactId}/journal?after=nonsense`);
  assert.is(byQuery.status, 400);
  assert.is((await view(stack, pactId, 0, { 'last-event-id': '-1' })).status, 400);
});

test('at most 10 live views per client; a view that goes frees its place', async ({ stack, pactId }) => {
  const open = await Promise.all(Array.from({ length: 10 }, () => view(stack, pactId, 1)));
  assert.ok(open.every((v) => v.status === 200));
  const refused = await fetch(`${stack.url}/machines/pacts/${pactId}/journal`);
  assert.is(refused.status, 429);
  assert.is(refused.headers.get('retry-after'), '5');
  assert.is((await refused.json()).error, 'rate_limited');
  open[0]!.close();
  let again: View | undefined;
  for (let attempt = 0; attempt < 50 && again?.status !== 200; attempt++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    again = await view(stack, pactId, 1);
  }
  assert.is(again?.status, 200, 'the closed view’s place was given back');
  for (const v of [...open, again!]) v.close();
});

test('any node serves the live journal: a view on a second node sees what the first node applies', async ({ stack }) => {
  const second = await Stack.start({ natsUrl: stack.natsUrl });
  try {
    const { seller, buyer } = newParties();
    const created = await stack.client.create(seller, tradeSpec(seller, buyer));
    const pactId = created.body.pact.id as string;
    let opened: View | undefined;
    for (let attempt = 0; attempt < 50 && opened?.status !== 200; attempt++) {
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 100)); // the second node's read model catching up
      opened = await view(second, pactId, 0);
      opened.close();
    }
    assert.is(opened?.status, 200);
    const watching = await view(second, pactId, 1); // the creation: the view is following
    assert.is((await stack.client.fund(buyer, pactId)).status, 200);
    assert.is((await stack.client.fund(seller, pactId)).status, 200);
    const seen = await watching.readUntil(3);
    watching.close();
    assert.is(seen.length, 3, 'both funds reached the open view on the other node');
  } finally {
    await second.stop();
  }
});

test('a node shuts down with live views open (they end; nothing waits on them)', async ({ stack, pactId }) => {
  const open = await view(stack, pactId, 1);
  assert.is(open.status, 200);
  const stopped = await Promise.race([
    stack.kill('SIGTERM').then(() => true),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 20_000)),
  ]);
  open.close();
  assert.ok(stopped, 'the node exited on SIGTERM while a live view was open');
});

test.run();
