import { suite } from 'uvu';
import * as assert from 'uvu/assert';
import type { EvmConfig } from '../../rails/evm/config.js';
import { tokenTransfer } from '../../rails/evm/eip3009.js';
import type { EscrowWallet } from '../../rails/evm/escrow-wallet.js';
import { startEscrowBench, type EscrowBench } from '../support/escrow-bench.js';
import { EvmEscrow } from '../../rails/evm/evm-escrow.js';
import { testWallet } from '../support/evm/test-keys.js';

// The escrow's solvency, as `/health` judges it (a rail judged insolvent refuses new pacts and funds): the
// token balance against what escrow owes. A payout mined but not read yet has left the balance while the
// books still count it; escrow is not short for that. A real shortfall still shows.

interface Context {
  bench: EscrowBench;
  /** Two nodes' wallets on one log, their resenders stopped: only a judgement reads receipts here. */
  wallets: EscrowWallet[];
}

const test = suite<Context>('escrow solvency');

test.before(async (context) => {
  context.bench = await startEscrowBench('escrow-solvency');
  context.wallets = [await context.bench.openWallet(), await context.bench.openWallet()];
  for (const wallet of context.wallets) wallet.stop();
});
test.after(async ({ bench }) => {
  await bench?.stop();
});

const payee = testWallet('solvency payee');
const collect = (claim: string, amount: bigint) =>
  ({ kind: 'collect', rail: 'x402', collectKey: claim, pactId: 'p_1', party: 'ed25519:x', payer: payee.address, amount: amount.toString() }) as never;
const payout = (amount: bigint) => ({ kind: 'payout', rail: 'x402', pactId: 'p_1', party: 'ed25519:y', to: payee.address, amount: amount.toString() }) as never;

/** A judgement made now by the node of `wallet` (an escrow keeps one for two seconds: each judges once). */
async function solvencyOf({ bench }: Context, wallet: EscrowWallet) {
  const { chain } = bench;
  const config = { chainId: chain.chainId, minGasWei: 1n, token: { address: chain.token.address, asset: 'TEST' } } as EvmConfig;
  return (await new EvmEscrow(config, wallet, bench.reader(), async () => undefined).health()).solvency;
}

/** A collect of `amount` booked by `wallet` (a zero transfer to itself stands in for the settlement; `mint` puts the tokens there). */
async function collected({ bench }: Context, wallet: EscrowWallet, claim: string, amount: bigint, mint = amount): Promise<void> {
  const { chain } = bench;
  if (mint > 0n) await chain.mint(chain.escrow.address, mint);
  const tx = await wallet.send(`collect:0xpayer:${claim}`, tokenTransfer(chain.token.address, chain.escrow.address, 0n), collect(claim, amount));
  assert.is(await wallet.outcome(tx, 20_000), 'success');
}

test('a payout mined but not read yet, on this node or another, leaves escrow solvent', async (context) => {
  const [here, there] = context.wallets as [EscrowWallet, EscrowWallet];
  const { chain } = context.bench;
  await collected(context, here, 'p_1:fund.0:a', 100n);
  assert.equal(await solvencyOf(context, here), { ok: true, balance: '100', liabilities: '100' });

  // The chain mines the payout at once; no receipt is read before the judgement.
  await here.send('payout:p_1:settle:pot:y', tokenTransfer(chain.token.address, payee.address, 60n), payout(60n));
  assert.is(await chain.balanceOf(chain.escrow.address), 40n);
  assert.equal([here.liabilities(), here.unsettled().count], [100n, 1], 'booked as still owed when judged');
  assert.equal(await solvencyOf(context, here), { ok: true, balance: '40', liabilities: '40' });

  // Another node pays from the same log; this node has not even taken that payout in.
  await there.send('payout:p_1:settle:pot:z', tokenTransfer(chain.token.address, payee.address, 40n), payout(40n));
  assert.is(here.liabilities(), 40n);
  assert.equal(await solvencyOf(context, here), { ok: true, balance: '0', liabilities: '0' });
});

test('a payout not mined yet stays owed: its tokens are still there', async (context) => {
  const [here] = context.wallets as [EscrowWallet];
  const { chain } = context.bench;
  const miner = (method: 'miner_stop' | 'miner_start') => chain.publicClient.request({ method: method as never, params: [] as never });
  await collected(context, here, 'p_3:fund.0:a', 50n);
  const before = await solvencyOf(context, here);
  await miner('miner_stop');
  try {
    await here.send('payout:p_3:settle:pot:y', tokenTransfer(chain.token.address, payee.address, 50n), payout(50n));
    assert.equal(await solvencyOf(context, here), before);
  } finally {
    await miner('miner_start');
  }
});

test('a real shortfall shows: a collect booked with nothing behind it', async (context) => {
  const [here] = context.wallets as [EscrowWallet];
  const before = await solvencyOf(context, here);
  const surplus = BigInt(before.balance as string) - BigInt(before.liabilities as string);
  await collected(context, here, 'p_2:fund.0:a', surplus + 30n, 0n);
  const after = await solvencyOf(context, here);
  assert.is(after.ok, false);
  assert.is(BigInt(after.liabilities as string) - BigInt(after.balance as string), 30n);
});

test.run();
