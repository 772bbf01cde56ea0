import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Stack } from './stack.js';
import { parseEther, type Address, type Hex } from 'viem';
import { testUsdcAbi } from '../../contracts/test-usdc-artifact.js';
import { startGanache } from './evm/ganache-node.js';
import {
  localChain,
  localPublicClient,
  localWalletClient,
  type LocalPublicClient,
  type LocalWalletClient,
} from './evm/local-clients.js';
import { deployTestUsdc, mintTestUsdc, type TestToken } from './evm/test-usdc.js';
import { testWallet, type TestWallet } from './evm/test-keys.js';

export type { TestToken } from './evm/test-usdc.js';
export type { TestWallet } from './evm/test-keys.js';

/** Base Sepolia's chain id: x402 v1 names networks from a closed list, and this one is `base-sepolia`. */
export const EVM_TEST_CHAIN_ID = 84532;

export interface EvmChainOptions {
  /** How many payers to create and mint to (default 3). */
  payers?: number;
  /** Token units (6 decimals) minted to each payer (default 1000 USDC). */
  mintEach?: bigint;
}

export interface EvmChain {
  rpcUrl: string;
  chainId: number;
  /** The x402 v2 network of this chain (CAIP-2). */
  network: `eip155:${number}`;
  /** The x402 v1 network name of this chain. */
  networkV1: 'base-sepolia';
  /** TestUSDC: `name` and `version` are its EIP-712 domain, as x402's `extra` and mppx's `authorization` take them. */
  token: TestToken;
  /** The custodial escrow wallet: ETH for gas, no tokens; the facilitator and payout signer. */
  escrow: TestWallet;
  /** Payers holding `mintEach` tokens and no ETH (x402 and mpp payers never pay gas). */
  payers: TestWallet[];
  publicClient: LocalPublicClient;
  /** Signs as `escrow`. */
  escrowClient: LocalWalletClient;
  balanceOf(owner: Address): Promise<bigint>;
  /** Whether the token has consumed `from`'s EIP-3009 authorization `nonce` (a settled or cancelled proof). */
  authorizationUsed(from: Address, nonce: Hex): Promise<boolean>;
  mint(to: Address, amount: bigint): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A local EVM chain in this process (ganache, chain id 84532, instamine) with TestUSDC deployed and minted
 * to the payers. Keys are derived from fixed labels, so addresses are the same on every run.
 */
export async function startEvmChain({ payers = 3, mintEach = 1_000_000_000n }: EvmChainOptions = {}): Promise<EvmChain> {
  const escrow = testWallet('escrow');
  // The token's deployer and minter is not the escrow, so the escrow's nonces belong to settlements and payouts.
  const minter = testWallet('token minter');
  const payerWallets = Array.from({ length: payers }, (_, i) => testWallet(`payer ${i + 1}`));

  const node = await startGanache({
    chainId: EVM_TEST_CHAIN_ID,
    funded: [escrow, minter].map(({ key }) => ({ key, wei: parseEther('1000') })),
  });
  try {
    const chain = localChain(EVM_TEST_CHAIN_ID, node.rpcUrl);
    const publicClient = localPublicClient(chain);
    const minterClient = localWalletClient(chain, minter.account);
    const token = await deployTestUsdc(minterClient, publicClient);
    const mint = (to: Address, amount: bigint) => mintTestUsdc(minterClient, publicClient, token.address, to, amount);
    for (const payer of payerWallets) await mint(payer.address, mintEach);

    const escrowClient = localWalletClient(chain, escrow.account);
    await spendNonceZero(escrowClient);

    return {
      rpcUrl: node.rpcUrl,
      chainId: EVM_TEST_CHAIN_ID,
      network: `eip155:${EVM_TEST_CHAIN_ID}`,
      networkV1: 'base-sepolia',
      token,
      escrow,
      payers: payerWallets,
      publicClient,
      escrowClient,
      balanceOf: (owner) =>
        publicClient.readContract({ address: token.address, abi: testUsdcAbi, functionName: 'balanceOf', args: [owner] }),
      authorizationUsed: (from, nonce) =>
        publicClient.readContract({
          address: token.address,
          abi: testUsdcAbi,
          functionName: 'authorizationState',
          args: [from, nonce],
        }),
      mint,
      stop: node.stop,
    };
  } catch (error) {
    await node.stop();
    throw error;
  }
}

/**
 * Ganache 7.9 re-executes a rebroadcast raw transaction whose nonce is 0 (it reads nonce 0 as "no nonce" and
 * assigns the next one), so the same signed payout would pay twice. Real nodes refuse it; spending the
 * escrow's nonce 0 on a no-op keeps the payout tests' "rebroadcast never pays twice" honest here.
 */
async function spendNonceZero(client: LocalWalletClient): Promise<void> {
  const hash = await client.sendTransaction({ to: client.account.address, value: 0n });
  await client.waitForTransactionReceipt({ hash });
}

/**
 * The service's environment for the EVM rails on `chain`: its escrow key goes into a file in `dir`, as
 * PACT_ESCROW_KEY_FILE takes it; receipts are polled every 50 ms.
 */
export function evmRailEnv(chain: EvmChain, dir: string): Record<string, string> {
  const keyFile = join(dir, 'escrow.key');
  writeFileSync(keyFile, `${chain.escrow.key}\n`, { mode: 0o600 });
  return {
    PACT_X402_RPC_URL: chain.rpcUrl,
    PACT_X402_CHAIN_ID: String(chain.chainId),
    PACT_X402_TOKEN: chain.token.address,
    PACT_X402_NETWORK_V1: chain.networkV1,
    PACT_ESCROW_KEY_FILE: keyFile,
    PACT_EVM_POLL_MS: '50',
  };
}

/** A local chain and the service started on it (x402; mpp too with `mpp`), their key files in a temp folder. */
export interface EvmStack {
  chain: EvmChain;
  stack: Stack;
  /** Where the escrow key (and the mpp secret) are: another service may be started on the same files. */
  dir: string;
  stop(): Promise<void>;
}

export async function startEvmStack(options: EvmChainOptions & { mpp?: boolean; env?: Record<string, string> } = {}): Promise<EvmStack> {
  const chain = await startEvmChain(options);
  const dir = mkdtempSync(join(tmpdir(), 'pact-evm-'));
  const env = { ...evmRailEnv(chain, dir), ...options.env };
  if (options.mpp) {
    const secretFile = join(dir, 'mpp.secret');
    writeFileSync(secretFile, 'a test secret for mpp challenges, longer than 32 bytes\n', { mode: 0o600 });
    Object.assign(env, { PACT_MPP_SECRET_FILE: secretFile, PACT_MPP_REALM: 'pact.test' });
  }
  const stack = await Stack.start({ env });
  return {
    chain,
    stack,
    dir,
    async stop() {
      await stack.stop();
      await chain.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The token balances of `wallets`, in order. */
export const balancesOf = (chain: EvmChain, ...wallets: { address: Address }[]) => Promise.all(wallets.map((wallet) => chain.balanceOf(wallet.address)));
