import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { Nats } from '../../actors/nats.js';
import { tokenTransfer } from '../../rails/evm/eip3009.js';
import type { EvmConfig } from '../../rails/evm/config.js';
import { EscrowWallet, KeySpentElsewhere } from '../../rails/evm/escrow-wallet.js';
import { EvmEscrow } from '../../rails/evm/evm-escrow.js';
import { WalletLog } from '../../rails/evm/wallet-log.js';
import type { EvmChain } from '../support/evm-chain.js';
import { startEscrowBench, type EscrowBench } from '../support/escrow-bench.js';
import { testWallet } from '../support/evm/test-keys.js';

// Two escrow wallets on one log, as two nodes paying from the same key: every nonce signed once, every claim
// paid once, each node's copy of the log without duplicates, whatever they send at the same time.

const test = suite<{ bench: EscrowBench; nats: Nats; chain: EvmChain; wallets: EscrowWallet[] }>('escrow wallet');

test.before(async (context) => {
  context.bench = await startEscrowBench('escrow-wallet');
  ({ nats: context.nats, chain: context.chain } = context.bench);
  await context.chain.mint(context.chain.escrow.address, 1_000_000n);
  context.wallets = [await context.bench.openWallet(), await context.bench.openWallet()];
});
test.after(async ({ bench }) => {
  await bench?.stop();
});

const payout = (chain: EvmChain, key: string, to: `0x${string}`, amount: bigint) => ({
  call: tokenTransfer(chain.token.address, to, amount),
  purpose: { kind: 'payout', rail: 'x402', pactId: 'p_0', party: 'ed25519:x', to, amount: amount.toString() } as never,
  key,
});

test('two nodes paying 20 payouts at once, each twice: each paid once, nonces unique, no copy twice in either log', async ({ chain, wallets }) => {
  const payee = testWallet('wallet test payee');
  const sends = [];
  for (let i = 0; i < 20; i++) {
    const { key, call, purpose } = payout(chain, `payout:p_0:settle:pot:${i}`, payee.address, BigInt(i + 1));
    for (const wallet of wallets) sends.push(wallet.send(key, call, purpose));
  }
  const sent = await Promise.all(sends);
  for (let i = 0; i < 20; i++) assert.is(sent[2 * i]!.hash, sent[2 * i + 1]!.hash, `payout ${i} signed twice`);
  await Promise.all(sent.map((tx) => wallets[0]!.outcome(tx, 20_000)));
  assert.is(await chain.balanceOf(payee.address), 210n); // 1 + 2 + … + 20
  for (const wallet of wallets) {
    const recorded = await wallet.transactions();
    assert.is(recorded.length, 20);
    assert.is(new Set(recorded.map((tx) => tx.nonce)).size, 20);
    assert.is(new Set(recorded.map((tx) => tx.key)).size, 20);
  }
});

test('the books: what escrow owes and what is unsettled, as every node and a restarted one count them', async ({ bench, wallets }) => {
  const restarted = await bench.openWallet();
  try {
    for (const wallet of [...wallets, restarted]) {
      const recorded = await wallet.transactions();
      for (const tx of recorded) assert.is(await wallet.outcome(tx, 20_000), 'success');
      const owed = recorded.reduce((sum, tx) => sum + (tx.purpose.kind === 'collect' ? 1n : -1n) * BigInt(tx.purpose.amount), 0n);
      assert.is(wallet.liabilities(), owed);
      assert.is(owed, -210n, 'the 20 payouts above, no collects');
      assert.equal(wallet.unsettled(), { count: 0, oldestMs: 0 });
    }
  } finally {
    restarted.stop();
  }
});

test('an authorization key spent on one claim is refused for another, even when both arrive at once', async ({ chain, wallets }) => {
  const payee = testWallet('wallet test payee 2');
  const collect = (claim: string) => ({ kind: 'collect', rail: 'x402', collectKey: claim, pactId: 'p_1', party: 'ed25519:x', payer: payee.address, amount: '1' }) as never;
  const call = tokenTransfer(chain.token.address, payee.address, 1n); // stands in for a settlement: what matters is the key
  const outcomes = await Promise.allSettled([
    wallets[0]!.send('collect:0xpayer:0x01', call, collect('p_1:fund.0:a')),
    wallets[1]!.send('collect:0xpayer:0x01', call, collect('p_2:fund.0:a')),
  ]);
  assert.equal(outcomes.map((o) => o.status).sort(), ['fulfilled', 'rejected']);
  const refused = outcomes.find((o) => o.status === 'rejected') as PromiseRejectedResult;
  assert.instance(refused.reason, KeySpentElsewhere);
});

test('the EVM rails\' collects are the log\'s places: a rail\'s collect where one succeeded, none elsewhere', async ({ bench, wallets }) => {
  const escrow = new EvmEscrow({ token: { asset: 'TEST' } } as EvmConfig, wallets[0]!, bench.reader(), async () => undefined);
  const recorded = await wallets[0]!.transactions();
  const places = async (rail: string, from: number) => {
    const found: [number, string][] = [];
    for await (const { position, place } of escrow.collects(rail, from)) found.push([position, typeof place === 'object' ? place.key : place]);
    return found;
  };
  const collectAt = recorded.findIndex((tx) => tx.purpose.kind === 'collect');
  const expected = recorded.map((tx, i): [number, string] => [i, i === collectAt ? (tx.purpose as { collectKey: string }).collectKey : 'none']);
  assert.equal(await places('x402', 0), expected);
  assert.equal(await places('x402', collectAt), expected.slice(collectAt));
  assert.ok((await places('mpp', 0)).every(([, place]) => place === 'none'), 'the other rail\'s collect is none of its own');
  assert.is(((await escrow.collectAt('x402', collectAt)) as { ref: string }).ref, recorded[collectAt]!.hash);
  assert.is(await escrow.collectAt('x402', recorded.length), 'none');
});

test('a node whose view moves on while it signs judges again: another node paid that claim, so nothing more is paid', async ({ bench, chain, nats, wallets }) => {
  const payee = testWallet('wallet test payee 3');
  const { key, call, purpose } = payout(chain, 'payout:p_3:settle:pot:x', payee.address, 7n);
  // This node's reads of the log come before the other node's record …
  let stale = true;
  const log = new (class extends WalletLog {
    override async entriesAfter(id: string, afterSeq: number) {
      const entries = await super.entriesAfter(id, afterSeq);
      return stale ? entries.filter((entry) => entry.value.key !== key) : entries;
    }
  })(nats.js, nats.jsm, chain.escrow.address);
  const reader = bench.reader();
  // … and, while it signs, a read of its own catches up with that record.
  let late: EscrowWallet | undefined;
  const readingMeanwhile = new Proxy(reader, {
    get: (target, name) =>
      name === 'getTransactionCount'
        ? async (args: Parameters<typeof reader.getTransactionCount>[0]) => {
            stale = false;
            await late!.transactions();
            return target.getTransactionCount(args);
          }
        : Reflect.get(target, name),
  });
  const paid = await wallets[0]!.send(key, call, purpose);
  await wallets[0]!.outcome(paid, 20_000);
  late = await EscrowWallet.open(chain.escrow.account, readingMeanwhile, log);
  try {
    const answer = await late.send(key, call, purpose);
    assert.is(answer.hash, paid.hash);
    assert.is((await late.transactions()).filter((tx) => tx.key === key).length, 1);
    assert.is(await chain.balanceOf(payee.address), 7n);
  } finally {
    late.stop();
  }
});

test.run();
