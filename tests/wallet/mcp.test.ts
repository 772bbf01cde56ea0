import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import { Stack } from '../support/stack.js';
import { pairedWallet, usd } from '../support/wallet-client.js';

// A real MCP client (the SDK's, over Streamable HTTP) against the wallet's POST /mcp: it lists the tools and runs
// discover, execute and get_execution; a refusal is a result with isError, not a protocol error.

const test = suite<{ stack: Stack }>('MCP over Streamable HTTP');
test.before(async (context) => {
  context.stack = await Stack.start();
});
test.after(async ({ stack }) => {
  await stack?.stop();
});

async function connected(stack: Stack, headers: Record<string, string> = {}) {
  const client = new Client({ name: 'pact-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.walletUrl}/mcp`), { requestInit: { headers } }));
  return client;
}

const bodyOf = (result: unknown) => (result as { structuredContent: Record<string, any> }).structuredContent;

test('the tools, discover, execute and get_execution with the wallet bearer', async ({ stack }) => {
  const wallet = await pairedWallet(stack, '1000000');
  const client = await connected(stack, wallet.auth);
  try {
    const { tools } = await client.listTools();
    assert.equal(tools.map((tool) => tool.name).sort(), ['create_checkout', 'discover_capabilities', 'execute_capability', 'get_execution', 'get_wallet', 'list_capabilities', 'search_registry']);
    const discovered = await client.callTool({ name: 'discover_capabilities', arguments: { task: 'will it rain in Lisbon tomorrow' } });
    assert.is(discovered.isError, false);
    assert.is(bodyOf(discovered).results[0].capabilityId, 'weather.forecast');
    const executed = await client.callTool({ name: 'execute_capability', arguments: { capabilityId: 'test.echo', input: { text: 'over mcp' } } });
    assert.is(executed.isError, false, JSON.stringify(executed));
    assert.equal(bodyOf(executed).result, { text: 'over mcp' });
    const read = await client.callTool({ name: 'get_execution', arguments: { id: bodyOf(executed).execution.id } });
    assert.equal(bodyOf(read).receipt.charged, usd(10_000));
    assert.equal(bodyOf(await client.callTool({ name: 'get_wallet', arguments: {} })).wallet.balance, usd(990_000));
  } finally {
    await client.close();
  }
});

test('refusals are results with isError and the route\'s error body', async ({ stack }) => {
  const poor = await pairedWallet(stack, '0');
  const client = await connected(stack, poor.auth);
  try {
    const topup = await client.callTool({ name: 'execute_capability', arguments: { capabilityId: 'test.echo', input: { text: 'x' } } });
    assert.equal([topup.isError, bodyOf(topup).error], [true, 'topup_required']);
    const anonymous = await connected(stack);
    const refused = await anonymous.callTool({ name: 'get_wallet', arguments: {} });
    assert.equal([refused.isError, bodyOf(refused).error], [true, 'unauthorized']);
    await anonymous.close();
  } finally {
    await client.close();
  }
});

test('keyed tools answer once; the checkout names this server; GET is 405 and a non-message a JSON-RPC error', async ({ stack }) => {
  const wallet = await pairedWallet(stack, '1000000');
  const client = await connected(stack, wallet.auth);
  try {
    const args = { capabilityId: 'test.echo', input: { text: 'keyed' }, idempotencyKey: 'mcp-once' };
    const [first, again] = [await client.callTool({ name: 'execute_capability', arguments: args }), await client.callTool({ name: 'execute_capability', arguments: args })];
    assert.is(bodyOf(again).execution.id, bodyOf(first).execution.id);
    assert.equal(bodyOf(await client.callTool({ name: 'get_wallet', arguments: {} })).wallet.balance, usd(990_000), 'charged once');
    const checkout = bodyOf(await client.callTool({ name: 'create_checkout', arguments: { amount: '1000000' } })).checkout;
    assert.is(new URL(checkout.url).host, new URL(stack.walletUrl).host);
  } finally {
    await client.close();
  }
  const get = await fetch(`${stack.walletUrl}/mcp`);
  assert.equal([get.status, get.headers.get('allow')], [405, 'POST']);
  const garbage = await fetch(`${stack.walletUrl}/mcp`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{nope' });
  assert.is(garbage.status, 400);
  assert.is((await garbage.json()).error.code, -32700);
});

test.run();
