import { encodeFunctionData, getAddress, isAddress, isHex, type Address, type Hex } from 'viem';
import type { ContractCall } from './escrow-wallet.js';
import { eip3009TokenAbi } from './token-abi.js';

/** A payer's signed EIP-3009 `TransferWithAuthorization`: what x402's `exact` payloads and mppx's evm credentials carry. */
export interface Authorization {
  from: Address;
  to: Address;
  value: bigint;
  validAfter: bigint;
  validBefore: bigint;
  nonce: Hex;
}

export interface SignedAuthorization {
  authorization: Authorization;
  signature: Hex;
}

const UINT = /^\d{1,78}$/;

/** The authorization and signature in `value` (decimal strings, addresses, a 32-byte nonce); undefined when malformed. */
export function signedAuthorizationOf(value: unknown): SignedAuthorization | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const { authorization: a, signature } = value as { authorization?: Record<string, unknown>; signature?: unknown };
  if (typeof a !== 'object' || a === null || !isHex(signature)) return undefined;
  const { from, to, value: amount, validAfter, validBefore, nonce } = a;
  if (typeof from !== 'string' || !isAddress(from) || typeof to !== 'string' || !isAddress(to)) return undefined;
  if (![amount, validAfter, validBefore].every((n) => typeof n === 'string' && UINT.test(n))) return undefined;
  if (!isHex(nonce) || nonce.length !== 66) return undefined;
  return {
    authorization: {
      from: getAddress(from),
      to: getAddress(to),
      value: BigInt(amount as string),
      validAfter: BigInt(validAfter as string),
      validBefore: BigInt(validBefore as string),
      nonce: nonce.toLowerCase() as Hex,
    },
    signature,
  };
}

/** One authorization is spent once: the token keys it by payer and nonce, and so does the escrow wallet. */
export const authorizationKey = ({ from, nonce }: Authorization) => `collect:${from.toLowerCase()}:${nonce}`;

/** The token call that moves the authorized amount into escrow; the escrow wallet sends it and pays the gas. */
export function transferWithAuthorization(token: Address, { authorization: a, signature }: SignedAuthorization): ContractCall {
  return {
    to: token,
    data: encodeFunctionData({
      abi: eip3009TokenAbi,
      functionName: 'transferWithAuthorization',
      args: [a.from, a.to, a.value, a.validAfter, a.validBefore, a.nonce, signature],
    }),
  };
}

export function tokenTransfer(token: Address, to: Address, value: bigint): ContractCall {
  return { to: token, data: encodeFunctionData({ abi: eip3009TokenAbi, functionName: 'transfer', args: [to, value] }) };
}
