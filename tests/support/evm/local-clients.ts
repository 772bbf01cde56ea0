import { createPublicClient, createWalletClient, defineChain, http, publicActions, type Chain } from 'viem';
import type { PrivateKeyAccount } from 'viem/accounts';

// viem polls for receipts and blocks every 4 s by default; a local chain mines at once, so poll often.
const POLLING_INTERVAL_MS = 50;

/**
 * A plain chain definition, even for a chain id viem knows (84532 is Base Sepolia there, with OP-stack
 * formatters and fee logic that a ganache node does not serve).
 */
export function localChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: `local test chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

export function localPublicClient(chain: Chain) {
  return createPublicClient({ chain, transport: http(), pollingInterval: POLLING_INTERVAL_MS });
}

/** A wallet client that signs locally with `account` and also reads (what the x402 facilitator signer needs). */
export function localWalletClient(chain: Chain, account: PrivateKeyAccount) {
  return createWalletClient({ account, chain, transport: http(), pollingInterval: POLLING_INTERVAL_MS }).extend(
    publicActions,
  );
}

export type LocalPublicClient = ReturnType<typeof localPublicClient>;
export type LocalWalletClient = ReturnType<typeof localWalletClient>;
