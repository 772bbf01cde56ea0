import { createPublicClient, defineChain, http, type Chain } from 'viem';

/**
 * A plain chain definition, even for a chain id viem knows (84532 is Base Sepolia there, with OP-stack
 * formatters and fee logic that a local node does not serve).
 */
export function plainChain(chainId: number, rpcUrl: string): Chain {
  return defineChain({
    id: chainId,
    name: `chain ${chainId}`,
    nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
    rpcUrls: { default: { http: [rpcUrl] } },
  });
}

/** Reads the chain; `pollingIntervalMs` is how often receipts are asked for (viem's default is 4 s). */
export function chainReader(chain: Chain, pollingIntervalMs: number, timeoutMs = 10_000) {
  return createPublicClient({ chain, transport: http(undefined, { timeout: timeoutMs, retryCount: 0 }), pollingInterval: pollingIntervalMs });
}

export type ChainReader = ReturnType<typeof chainReader>;
