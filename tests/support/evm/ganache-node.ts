import ganache from 'ganache';
import type { Hex } from 'viem';

export interface GanacheNode {
  rpcUrl: string;
  stop(): Promise<void>;
}

export interface GanacheOptions {
  chainId: number;
  /** Keys whose accounts start with ETH for gas. */
  funded: { key: Hex; wei: bigint }[];
}

/** Ganache in this process, serving JSON-RPC over HTTP on a free loopback port. */
export async function startGanache({ chainId, funded }: GanacheOptions): Promise<GanacheNode> {
  const server = ganache.server({
    // ganache 7.9 stops at shanghai; TestUSDC is compiled for it.
    // One request at a time: with two clients sending at once, ganache 7.9 could hold an eth_estimateGas
    // until it timed out while another client's transaction was being mined.
    chain: { chainId, hardfork: 'shanghai', asyncRequestProcessing: false },
    // Eager instamine: each transaction is mined in its own block before eth_sendRawTransaction answers.
    miner: { instamine: 'eager', blockTime: 0 },
    wallet: { accounts: funded.map(({ key, wei }) => ({ secretKey: key, balance: `0x${wei.toString(16)}` })) },
    logging: { quiet: true },
  });
  await server.listen(0, '127.0.0.1');
  const address = server.address() as { address: string; port: number };
  return { rpcUrl: `http://127.0.0.1:${address.port}`, stop: () => server.close() };
}
