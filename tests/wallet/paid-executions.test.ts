import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Hex } from 'viem';
import { evmRailEnv, startEvmChain, type EvmChain } from '../support/evm-chain.js';
import { startPaidProviders, type PaidProviders, type PaidRail, type ProviderKind } from '../support/paid-providers.js';
import { Stack } from '../support/stack.js';
import { documentFits, pairedWallet, usd, walletCall as call } from '../support/wallet-client.js';

// Executions of x402 (v2 and v1) and mpp capabilities: local providers on the local chain, paid from the wallet
// service's own payer key. An answer charges what the provider took, with its settlement transaction on the receipt;
// a failure before payment, a refused payment, or a price above the hold releases the whole hold; a provider that
// took its payment and failed is charged (`unanswered`); a call lost after payment is `ambiguous` until the keeper
// reads the chain.

const INTERNAL = 'internal token of the paid executions tests';
type Context = { chain: EvmChain; providers: PaidProviders; stack: Stack; dir: string };
const test = suite<Context>('executions paid on x402 and mpp');

test.before(async (context) => {
  context.chain = await startEvmChain({ payers: 1 });
  context.providers = await startPaidProviders(context.chain);
  context.dir = mkdtempSync(join(tmpdir(), 'pact-paid-executions-'));
  const payerKey = join(context.dir, 'provider-payer.key');
  writeFileSync(payerKey, `${context.chain.payers[0]!.key}\n`, { mode: 0o600 });
  context.stack = await Stack.start({
    env: {
      ...evmRailEnv(context.chain, context.dir),
      WALLET_CHECKOUT_RAILS: 'mock',
      WALLET_PROVIDER_KEY_FILE: payerKey,
      WALLET_PROVIDER_TIMEOUT_MS: '1500',
      WALLET_CATALOG_FILE: context.providers.writeCatalog(context.dir),
      WALLET_REGISTRY_SOURCES: context.providers.registrySources,
      WALLET_REGISTRY_ALLOW_PRIVATE: '1',
      WALLET_INTERNAL_TOKEN: INTERNAL,
    },
  });
});
test.after(async ({ stack, providers, chain, dir }) => {
  await stack?.stop();
  await providers?.stop();
  await chain?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const RAILS: PaidRail[] = ['x402', 'x402v1', 'mpp'];
const capabilityOf = (kind: ProviderKind) => `test.words-${kind}`;
const execute = (stack: Stack, auth: Record<string, string>, rail: ProviderKind, extra: Record<string, unknown> = {}) =>
  call(stack, 'POST', '/v1/executions', { capabilityId: capabilityOf(rail), input: { text: 'three small words' }, ...extra }, auth);
const walletOf = async (stack: Stack, auth: Record<string, string>) => (await call(stack, 'GET', '/v1/me', undefined, auth)).body.wallet;
const payer = (chain: EvmChain) => chain.payers[0]!;

for (const rail of RAILS) {
  test(`${rail}: an answer is paid from the service's key and charged what the provider took, with its transaction on the receipt`, async ({ stack, chain, providers }) => {
    const fits = await documentFits(stack);
    const wallet = await pairedWallet(stack, '1000000');
    const [payerBefore, providerBefore] = [await chain.balanceOf(payer(chain).address), await chain.balanceOf(providers.payTo)];
    const done = await execute(stack, wallet.auth, rail);
    fits('POST', '/v1/executions', done, 200);
    assert.equal(done.body.result, { words: 3 });
    const { execution, receipt } = done.body;
    assert.equal([execution.status, execution.rail, receipt.charged, receipt.released], ['succeeded', rail === 'mpp' ? 'mpp' : 'x402', usd(providers.price), usd(0)]);
    assert.is(receipt.providerPayment.network, chain.network);
    assert.is(receipt.providerPayment.payTo.toLowerCase(), providers.payTo.toLowerCase());
    assert.match(receipt.providerPayment.reference, /^0x[0-9a-f]{64}$/);
    const mined = await chain.publicClient.getTransactionReceipt({ hash: receipt.providerPayment.reference as Hex });
    assert.is(mined.status, 'success');
    assert.equal([await chain.balanceOf(payer(chain).address), await chain.balanceOf(providers.payTo)], [payerBefore - providers.price, providerBefore + providers.price]);
    const after = await walletOf(stack, wallet.auth);
    assert.equal([after.balance, after.held], [usd(1_000_000n - providers.price), usd(0)]);
  });

  test(`${rail}: a provider failure before payment releases the whole hold and pays nothing`, async ({ stack, chain, providers }) => {
    const fits = await documentFits(stack);
    const wallet = await pairedWallet(stack, '1000000');
    const before = await chain.balanceOf(payer(chain).address);
    providers.next(rail, 'fail-unpaid');
    const failed = await execute(stack, wallet.auth, rail);
    fits('POST', '/v1/executions', failed, 502);
    assert.is(failed.body.error, 'provider_failed');
    assert.equal([failed.body.execution.status, failed.body.receipt.charged, failed.body.receipt.released], ['failed', usd(0), usd(providers.price)]);
    assert.is(await chain.balanceOf(payer(chain).address), before);
    const after = await walletOf(stack, wallet.auth);
    assert.equal([after.balance, after.held], [usd(1_000_000), usd(0)]);
  });

  test(`${rail}: a price above the hold is never signed: failed, the whole hold released, nothing leaves the payer`, async ({ stack, chain, providers }) => {
    const wallet = await pairedWallet(stack, '1000000');
    const before = await chain.balanceOf(payer(chain).address);
    const paidBefore = providers.paidCalls[rail];
    providers.next(rail, 'overcharge');
    const dear = await execute(stack, wallet.auth, rail);
    assert.equal([dear.status, dear.body.execution.status, dear.body.receipt.charged, dear.body.receipt.released], [502, 'failed', usd(0), usd(providers.price)]);
    assert.match(dear.body.message, /more than the 2500 held/);
    assert.is(providers.paidCalls[rail], paidBefore, 'the overcharging provider was never sent a payment');
    assert.is(await chain.balanceOf(payer(chain).address), before);
    const after = await walletOf(stack, wallet.auth);
    assert.equal([after.balance, after.held], [usd(1_000_000), usd(0)]);
  });

  test(`${rail}: top-up required, input refused, price above the maximum: nothing created, nothing paid`, async ({ stack, chain }) => {
    const fits = await documentFits(stack);
    const before = await chain.balanceOf(payer(chain).address);
    const empty = await pairedWallet(stack, '0');
    const topup = await execute(stack, empty.auth, rail);
    fits('POST', '/v1/executions', topup, 402);
    assert.equal([topup.body.error, topup.body.shortfall, topup.body.topUp], ['topup_required', usd(2_500), { method: 'POST', path: '/v1/checkout' }]);
    const wallet = await pairedWallet(stack, '1000000');
    const invalid = await call(stack, 'POST', '/v1/executions', { capabilityId: capabilityOf(rail), input: { text: 42 } }, wallet.auth);
    fits('POST', '/v1/executions', invalid, 400);
    const capped = await execute(stack, wallet.auth, rail, { maxPrice: usd(2_499) });
    fits('POST', '/v1/executions', capped, 422);
    assert.is(capped.body.error, 'price_above_max');
    assert.is(await chain.balanceOf(payer(chain).address), before);
    assert.is((await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.usage.executions, 0);
  });
}

test('a plain HTTP provider server: an answer charged the catalog price, a failure released whole, top-up required, input refused, price above the maximum', async ({ stack, chain, providers }) => {
  const fits = await documentFits(stack);
  const before = await chain.balanceOf(payer(chain).address);
  const wallet = await pairedWallet(stack, '1000000');
  const done = await execute(stack, wallet.auth, 'http');
  fits('POST', '/v1/executions', done, 200);
  assert.equal([done.body.result, done.body.execution.rail, done.body.receipt.charged, done.body.receipt.providerPayment], [{ words: 3 }, 'http', usd(providers.plainPrice), {}]);
  providers.next('http', 'fail-unpaid');
  const failed = await execute(stack, wallet.auth, 'http');
  fits('POST', '/v1/executions', failed, 502);
  assert.equal([failed.body.execution.status, failed.body.receipt.charged, failed.body.receipt.released], ['failed', usd(0), usd(providers.plainPrice)]);
  fits('POST', '/v1/executions', await execute(stack, (await pairedWallet(stack, '0')).auth, 'http'), 402);
  fits('POST', '/v1/executions', await call(stack, 'POST', '/v1/executions', { capabilityId: capabilityOf('http'), input: {} }, wallet.auth), 400);
  fits('POST', '/v1/executions', await execute(stack, wallet.auth, 'http', { maxPrice: usd(providers.plainPrice - 1n) }), 422);
  const after = await walletOf(stack, wallet.auth);
  assert.equal([after.balance, after.held], [usd(1_000_000n - providers.plainPrice), usd(0)]);
  assert.is(await chain.balanceOf(payer(chain).address), before, 'nothing is paid on the wire for a plain provider');
});

test('a provider that takes its payment and fails is charged what it took (unanswered), with the transaction', async ({ stack, chain, providers }) => {
  for (const rail of ['x402', 'mpp'] as const) {
    const wallet = await pairedWallet(stack, '1000000');
    providers.next(rail, 'take-and-fail');
    const broke = await execute(stack, wallet.auth, rail);
    assert.equal([broke.status, broke.body.error, broke.body.execution.status], [502, 'provider_failed', 'unanswered']);
    assert.equal([broke.body.receipt.charged, broke.body.receipt.released], [usd(providers.price), usd(0)]);
    assert.match(broke.body.receipt.providerPayment.reference, /^0x[0-9a-f]{64}$/);
    const after = await walletOf(stack, wallet.auth);
    assert.equal([after.balance, after.held], [usd(1_000_000n - providers.price), usd(0)]);
  }
});

test('a call lost after the provider took its payment is charged at once (the chain shows it), and never called again', async ({ stack, providers }) => {
  const wallet = await pairedWallet(stack, '1000000');
  providers.next('x402', 'take-and-hang');
  const headers = { 'idempotency-key': 'lost after payment' };
  const body = { capabilityId: capabilityOf('x402'), input: { text: 'a b' } };
  const lost = await call(stack, 'POST', '/v1/executions', body, { ...wallet.auth, ...headers });
  assert.equal([lost.status, lost.body.execution.status, lost.body.receipt.charged], [502, 'unanswered', usd(providers.price)]);
  assert.match(lost.body.receipt.providerPayment.reference, /^0x[0-9a-f]{64}$/);
  const paid = providers.paidCalls.x402;
  const again = await call(stack, 'POST', '/v1/executions', body, { ...wallet.auth, ...headers });
  assert.equal([again.status, again.body.execution.id, again.body.execution.status], [502, lost.body.execution.id, 'unanswered']);
  assert.is(providers.paidCalls.x402, paid, 'a retry under the key never calls again');
  const after = await walletOf(stack, wallet.auth);
  assert.equal([after.balance, after.held], [usd(1_000_000n - providers.price), usd(0)]);
});

test('an answer whose payment the provider never took is charged, and its receipt names no transaction', async ({ stack, chain, providers }) => {
  const wallet = await pairedWallet(stack, '1000000');
  const before = await chain.balanceOf(payer(chain).address);
  providers.next('x402', 'answer-untaken');
  const done = await execute(stack, wallet.auth, 'x402');
  assert.equal([done.status, done.body.result, done.body.receipt.charged], [200, { words: 3 }, usd(providers.price)]);
  assert.is(done.body.receipt.providerPayment.reference, undefined, 'only a transaction the chain shows is named');
  assert.is(await chain.balanceOf(payer(chain).address), before);
});

test('attacks by a provider are refused before anything is signed or charged', async ({ stack, chain, providers }) => {
  const wallet = await pairedWallet(stack, '1000000');
  const before = await chain.balanceOf(payer(chain).address);
  providers.next('x402v1', 'v1-split-amount');
  const split = await execute(stack, wallet.auth, 'x402v1');
  assert.equal([split.status, split.body.execution.status, split.body.receipt.released], [502, 'failed', usd(providers.price)]);
  assert.match(split.body.message, /more than the 2500 held/, 'v1 is priced by maxAmountRequired, which it signs');
  providers.next('mpp', 'long-challenge');
  const long = await execute(stack, wallet.auth, 'mpp');
  assert.equal([long.status, long.body.execution.status], [502, 'failed']);
  assert.match(long.body.message, /signs for at most 600 s/);
  const first = await execute(stack, wallet.auth, 'mpp');
  assert.is(first.status, 200);
  providers.next('mpp', 'same-challenge');
  const replayed = await execute(stack, wallet.auth, 'mpp');
  assert.equal([replayed.status, replayed.body.execution.status, replayed.body.receipt.charged], [502, 'failed', usd(0)]);
  assert.match(replayed.body.message, /nonce is (spent|taken)/);
  providers.next('x402', 'huge-free');
  const huge = await execute(stack, wallet.auth, 'x402');
  assert.equal([huge.status, huge.body.execution.status], [502, 'failed']);
  assert.match(huge.body.message, /over 1000000 bytes/);
  assert.is(await chain.balanceOf(payer(chain).address), before - providers.price, 'only the honest call was paid');
  const after = await walletOf(stack, wallet.auth);
  assert.equal([after.balance, after.held], [usd(1_000_000n - providers.price), usd(0)]);
});

test('a burst of paid executions at one wallet never overspends: the wallet and the chain agree', async ({ stack, chain, providers }) => {
  const wallet = await pairedWallet(stack, '1000000');
  // A checkout is at least 1 USD: a pact's reservation holds all but four calls' worth.
  const fund = 1_000_000n;
  const affordable = 4n;
  const drain = fund - affordable * providers.price;
  const reservation = await call(stack, 'POST', '/v1/internal/agent-pact/reservations', { walletId: wallet.id, amount: usd(drain), activity: { kind: 'pact', pactId: 'p_burst', party: 'burst', role: 'payer' } }, { authorization: `Bearer ${INTERNAL}` });
  assert.is(reservation.status, 201);
  const before = await chain.balanceOf(payer(chain).address);
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => execute(stack, wallet.auth, i % 2 === 0 ? 'x402' : 'mpp')));
  const succeeded = answers.filter((answer) => answer.status === 200).length;
  assert.is(succeeded, Number(affordable), JSON.stringify(answers.map((answer) => [answer.status, answer.body.error, answer.body.message])));
  assert.ok(answers.every((answer) => answer.status === 200 || (answer.status === 402 && answer.body.error === 'topup_required')));
  assert.is(await chain.balanceOf(payer(chain).address), before - affordable * providers.price);
  const after = await walletOf(stack, wallet.auth);
  assert.equal([after.balance, after.held], [usd(fund - affordable * providers.price), usd(drain)]);
});

test('discovery: the local paid providers are executable; the shipped ones on Base are not, and say why', async ({ stack }) => {
  const found = (await call(stack, 'POST', '/v1/discover', { task: 'count the words of a text', limit: 5 })).body.results;
  const local = found.filter((result: { capabilityId: string }) => result.capabilityId.startsWith('test.words-'));
  assert.ok(local.length >= 3, 'every local provider is found');
  assert.ok(local.every((result: { executable: boolean }) => result.executable));
  const shipped = (await call(stack, 'POST', '/v1/discover', { task: 'web search', limit: 3 })).body.results;
  assert.ok(shipped.length > 0);
  for (const result of shipped) {
    assert.is(result.executable, false);
    assert.match(result.blockingRequirements.join(' '), /this service's payer pays on eip155:84532/);
  }
});

test('over MCP: the SDK client discovers a paid capability, executes it on x402 and reads its receipt', async ({ stack, chain }) => {
  const wallet = await pairedWallet(stack, '1000000');
  const client = new Client({ name: 'pact-paid-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${stack.walletUrl}/mcp`), { requestInit: { headers: wallet.auth } }));
  try {
    const structured = (result: unknown) => (result as { structuredContent: Record<string, any> }).structuredContent;
    const found = structured(await client.callTool({ name: 'discover_capabilities', arguments: { task: 'count the words of a text', rails: ['x402'] } }));
    const best = found.results[0];
    assert.ok(best.capabilityId.startsWith('test.words-x402') && best.executable, JSON.stringify(best));
    const executed = await client.callTool({ name: 'execute_capability', arguments: { capabilityId: best.capabilityId, registryId: best.registryId, input: { text: 'one two' } } });
    assert.is(executed.isError, false, JSON.stringify(executed));
    assert.equal(structured(executed).result, { words: 2 });
    const read = structured(await client.callTool({ name: 'get_execution', arguments: { id: structured(executed).execution.id } }));
    assert.is(read.receipt.providerPayment.network, chain.network);
    assert.match(read.receipt.providerPayment.reference, /^0x[0-9a-f]{64}$/);
  } finally {
    await client.close();
  }
});

// Last: it moves the chain's clock an hour on, past every authorization signed before.
test('calls with a payment out and no answer stay held until their authorizations lapse on the chain, then come back whole: refused, hung, cut off by a crash after signing', async ({ stack, chain, providers }) => {
  const wallet = await pairedWallet(stack, '1000000');
  const statusOf = async (id: string) => (await call(stack, 'GET', `/v1/executions/${id}`, undefined, wallet.auth)).body;
  providers.next('x402', 'refuse-payment');
  const refused = await execute(stack, wallet.auth, 'x402');
  assert.equal([refused.status, refused.body.execution.status, refused.body.receipt.charged], [502, 'ambiguous', usd(0)]);
  assert.match(refused.body.message, /not taken, and held until it lapses/);
  providers.next('mpp', 'hang');
  const hung = await execute(stack, wallet.auth, 'mpp');
  assert.equal([hung.status, hung.body.execution.status], [502, 'ambiguous']);
  const sentBefore = providers.paidCalls.x402;
  const key = { 'idempotency-key': 'cut off after signing' };
  const body = { capabilityId: capabilityOf('x402'), input: { text: 'a b' } };
  await stack.crashDuring('execution-paying', () => call(stack, 'POST', '/v1/executions', body, { ...wallet.auth, ...key }));
  assert.is(providers.paidCalls.x402, sentBefore, 'the crash came before the payment was sent');
  const underWay = await call(stack, 'POST', '/v1/executions', body, { ...wallet.auth, ...key });
  assert.equal([underWay.status, underWay.body.error], [409, 'idempotency_in_progress'], 'never called again');
  const ledger = (await call(stack, 'GET', '/v1/me', undefined, wallet.auth)).body.ledger.items;
  const cutOff = ledger.find((item: { type: string }) => item.type === 'hold').reference.id as string;
  assert.is((await statusOf(cutOff)).execution.status, 'paying');
  await call(stack, 'POST', '/__test/clock', { advanceMs: 200_000 }); // past any call's time: the keeper takes it as lost
  await call(stack, 'POST', '/__test/clock', { advanceMs: 3_600_000 });
  const lost = [refused.body.execution.id, hung.body.execution.id, cutOff];
  for (const id of lost) assert.is((await statusOf(id)).execution.status, 'ambiguous', 'the chain has not passed their validBefore: still usable, held');
  assert.equal((await walletOf(stack, wallet.auth)).held, usd(3n * providers.price));
  await chain.publicClient.request({ method: 'evm_increaseTime' as never, params: [3_600] as never });
  await chain.publicClient.request({ method: 'evm_mine' as never, params: [] as never });
  await call(stack, 'POST', '/__test/clock', { advanceMs: 60_000 }); // the keeper looks again at what it could not end
  for (const id of lost) {
    const { execution, receipt } = await statusOf(id);
    assert.equal([execution.status, receipt.charged, receipt.released], ['failed', usd(0), usd(providers.price)]);
  }
  const after = await walletOf(stack, wallet.auth);
  assert.equal([after.balance, after.held], [usd(1_000_000), usd(0)]);
});

test.run();
