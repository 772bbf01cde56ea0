import { getEvmChainIdV1 } from '@x402/evm/v1';

/** The chain id of an x402 or mpp network: `eip155:<id>` (CAIP-2), or a v1 name x402 knows (`base-sepolia`). */
export function chainIdOfNetwork(network: string): number | undefined {
  if (network.startsWith('eip155:')) {
    const id = Number(network.slice('eip155:'.length));
    return Number.isSafeInteger(id) && id > 0 ? id : undefined;
  }
  try {
    return getEvmChainIdV1(network as never);
  } catch {
    return undefined;
  }
}
