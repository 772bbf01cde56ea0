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
  wallet: EscrowWallet;
  escrow: EvmEscrow;
}

const test = suite<Context>('escrow solvency');

test.before(async (context) => {
  context.bench = await startEscrowBench('escrow-solvency');
  const { chain } = context.bench;
  context.wallet = await context.bench.openWallet();
  const config = { chainId: chain.chainId, minGasWei: 1n, token: { address: chain.token.address, asset: 'TEST' } } as EvmConfig;
  context.escrow = new EvmEscrow(config, context.wallet, context.bench.reader(), async () => undefined);
});
test.after(async ({ bench }) => {
  await bench?.stop();
});

const payee = testWallet('solvency payee');
const collect = (claim: string, amount: bigint) =>
  ({ kind: 'collect', rail: 'x402', collectKey: claim, pactId: 'p_1', party: 'ed25519:x', payer: payee.address, amount: amount.toString() }) as never;
const payout = (to: `0x${string}`, amount: bigint) => ({ kind: 'payout', rail: 'x402', pactId: 'p_1', party: 'ed25519:y', to, amount: amount.toString() }) as never;

/** A judgement made now (the escrow keeps one for two seconds). */
async function solvencyNow({ escrow }: Context) {
  await new Promise((resolve) => setTimeout(resolve, 2_100));
  return (await escrow.health()).solvency;
}

test('a payout mined but not read yet leaves escrow solvent; a real shortfall does not', async (context) => {
  const { wallet } = context;
  const { chain } = context.bench;
  // A collect of 100 (a zero transfer to itself stands in for the settlement; the tokens are minted).
  await chain.mint(chain.escrow.address, 100n);
  const collected = await wallet.send('collect:0xpayer:0x01', tokenTransfer(chain.token.address, chain.escrow.address, 0n), collect('p_1:fund.0:a', 100n));
  assert.is(await wallet.outcome(collected, 20_000), 'success');
  assert.equal(await solvencyNow(context), { ok: true, balance: '100', liabilities: '100' });

  // The chain mines the payout at once; its receipt is not read.
  const paid = await wallet.send('payout:p_1:settle:pot:y', tokenTransfer(chain.token.address, payee.address, 100n), payout(payee.address, 100n));
  assert.is(await chain.balanceOf(chain.escrow.address), 0n);
  assert.equal(await solvencyNow(context), { ok: true, balance: '0', liabilities: '0' });
  assert.is(await wallet.outcome(paid, 20_000), 'success');
  assert.equal(await solvencyNow(context), { ok: true, balance: '0', liabilities: '0' });

  // A collect booked with nothing behind it: escrow owes 30 it does not hold.
  const unbacked = await wallet.send('collect:0xpayer:0x02', tokenTransfer(chain.token.address, chain.escrow.address, 0n), collect('p_2:fund.0:a', 30n));
  assert.is(await wallet.outcome(unbacked, 20_000), 'success');
  assert.equal(await solvencyNow(context), { ok: false, balance: '0', liabilities: '30' });
});

test.run();
