import { readFileSync } from 'node:fs';
// ox (the EVM library viem is built on) rather than viem: importing viem's index is more than half a second of
// every start, which reads this file.
import * as EvmAddress from 'ox/Address';
import type { Address, Hex } from 'viem';

/** The EIP-3009 token escrow holds: its address, the EIP-712 domain payers sign over, and our name for it. */
export interface EscrowToken {
  address: Address;
  /** The `asset` of pacts on this chain's rails (Money.asset), e.g. USDC. */
  asset: string;
  /** EIP-712 domain name and version (x402's `extra`, mppx's `authorization`): `USDC` and `2` on Base Sepolia. */
  name: string;
  version: string;
  decimals: number;
}

/** The chain the x402 and mpp rails share, and the one custodial escrow wallet on it. */
export interface EvmConfig {
  rpcUrl: string;
  chainId: number;
  token: EscrowToken;
  /** The x402 v1 network name of the chain (`base-sepolia`), when it has one: v1 payloads name it. */
  networkV1: string | undefined;
  /** The escrow wallet's private key, read from PACT_ESCROW_KEY_FILE; never logged. */
  escrowKey: Hex;
  /** Below this much ETH the escrow cannot pay gas: the rails say they are not ready. */
  minGasWei: bigint;
  pollingIntervalMs: number;
}

/**
 * The chain settings, or undefined when PACT_X402_RPC_URL is unset (then the x402 and mpp rails are not
 * offered). A half-given configuration stops the start with what is missing.
 */
export function evmConfig(env: NodeJS.ProcessEnv): EvmConfig | undefined {
  const rpcUrl = env.PACT_X402_RPC_URL;
  if (!rpcUrl) return undefined;
  const need = (name: string) => {
    const value = env[name];
    if (!value) throw new Error(`${name} is required when PACT_X402_RPC_URL is set`);
    return value;
  };
  /** A number's text as set, or `fallback` when it is unset or blank. */
  const numberText = (name: string, fallback: string) => env[name]?.trim() || fallback;
  const tokenAddress = need('PACT_X402_TOKEN');
  if (!EvmAddress.validate(tokenAddress)) throw new Error(`PACT_X402_TOKEN is not an address: ${tokenAddress}`);
  return {
    rpcUrl,
    chainId: positive('PACT_X402_CHAIN_ID', need('PACT_X402_CHAIN_ID')),
    token: {
      address: EvmAddress.checksum(tokenAddress),
      asset: env.PACT_X402_ASSET || 'USDC',
      name: env.PACT_X402_TOKEN_NAME || 'USDC',
      version: env.PACT_X402_TOKEN_VERSION || '2',
      decimals: positive('PACT_X402_TOKEN_DECIMALS', numberText('PACT_X402_TOKEN_DECIMALS', '6')),
    },
    networkV1: env.PACT_X402_NETWORK_V1 || undefined,
    escrowKey: privateKeyFrom(need('PACT_ESCROW_KEY_FILE')),
    minGasWei: wei('PACT_EVM_MIN_GAS_WEI', numberText('PACT_EVM_MIN_GAS_WEI', '1000000000000000')),
    pollingIntervalMs: positive('PACT_EVM_POLL_MS', numberText('PACT_EVM_POLL_MS', '1000')),
  };
}

function wei(name: string, text: string): bigint {
  if (!/^\d+$/.test(text)) throw new Error(`${name} must be a non-negative integer (wei), got ${text}`);
  return BigInt(text);
}

function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got ${text}`);
  return value;
}

/** The key file holds one 32-byte hex key; an error names the file, never what it holds. */
export function privateKeyFrom(file: string): Hex {
  const text = readFileSync(file, 'utf8').trim();
  const key = (text.startsWith('0x') ? text : `0x${text}`) as Hex;
  if (!/^0x[0-9a-fA-F]{64}$/.test(key)) throw new Error(`${file} does not hold a 32-byte hex private key`);
  return key;
}
