import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentPayloadV1, PaymentRequirements, PaymentRequirementsV1 } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { ExactEvmScheme } from '@x402/evm/exact/client';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import { ExactEvmSchemeV1 } from '@x402/evm/v1';
import type { Address, Hex } from 'viem';
import type { EvmChain, TestWallet } from '../evm-chain.js';
import type { LocalWalletClient } from './local-clients.js';

// x402 `exact` payments on the local chain, as a payer makes them and a self-hosted facilitator checks them.

/** A facilitator that verifies and settles with `settler` (the escrow wallet unless told), which pays the gas. */
export function selfHostedFacilitator(chain: EvmChain, settler: { address: Address; client: LocalWalletClient } = { address: chain.escrow.address, client: chain.escrowClient }): x402Facilitator {
  const facilitator = new x402Facilitator();
  const { client } = settler;
  // x402's signer type takes loose ABIs and typed data; viem's methods are stricter, hence the casts.
  const signer = toFacilitatorEvmSigner({
    address: settler.address,
    readContract: (args) => client.readContract(args as never),
    verifyTypedData: (args) => client.verifyTypedData(args as never),
    writeContract: (args) => client.writeContract(args as never),
    sendTransaction: (args) => client.sendTransaction(args),
    waitForTransactionReceipt: (args) => client.waitForTransactionReceipt(args),
    getCode: (args) => client.getCode(args),
  });
  // Registers v2 on this network and every v1 network name, `base-sepolia` among them.
  registerExactEvmScheme(facilitator, { signer, networks: chain.network });
  return facilitator;
}

/** A v2 requirement to pay `amount` token units to the escrow. `extra` is the token's EIP-712 domain. */
export function requirementV2(chain: EvmChain, amount: bigint): PaymentRequirements {
  return {
    scheme: 'exact',
    network: chain.network,
    asset: chain.token.address,
    amount: amount.toString(),
    payTo: chain.escrow.address,
    maxTimeoutSeconds: 600,
    extra: { name: chain.token.name, version: chain.token.version },
  };
}

export function requirementV1(chain: EvmChain, amount: bigint): PaymentRequirementsV1 {
  return {
    scheme: 'exact',
    // v1 carries a plain network name, though @x402/core types every network as CAIP-2.
    network: chain.networkV1 as Network,
    asset: chain.token.address,
    maxAmountRequired: amount.toString(),
    payTo: chain.escrow.address,
    resource: 'http://pact.test/pacts/p_test/fund',
    description: 'fund a test pact',
    mimeType: 'application/json',
    outputSchema: {},
    maxTimeoutSeconds: 600,
    extra: { name: chain.token.name, version: chain.token.version },
  };
}

/** The payer's EIP-3009 authorization for `requirement`, as a v2 payment payload. */
export async function payV2(payer: TestWallet, requirement: PaymentRequirements): Promise<PaymentPayload> {
  const signed = await new ExactEvmScheme(payer.account).createPaymentPayload(2, requirement);
  return { ...signed, accepted: requirement };
}

export async function payV1(payer: TestWallet, requirement: PaymentRequirementsV1): Promise<PaymentPayloadV1> {
  // The v1 client reads `maxAmountRequired`, which the v2 requirement type does not declare.
  const signed = await new ExactEvmSchemeV1(payer.account).createPaymentPayload(1, requirement as never);
  return { x402Version: 1, scheme: signed.scheme, network: signed.network, payload: signed.payload };
}

export interface Eip3009Authorization {
  from: Address;
  to: Address;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: Hex;
}

/** The signed EIP-3009 authorization inside an `exact` payload (v1 and v2 carry it alike). */
export function authorizationOf(payment: PaymentPayload | PaymentPayloadV1): {
  authorization: Eip3009Authorization;
  signature: Hex;
} {
  return payment.payload as { authorization: Eip3009Authorization; signature: Hex };
}

/** A payment as the text of an X-PAYMENT header: base64 of its JSON. */
export const asPaymentHeader = (payment: unknown) => Buffer.from(JSON.stringify(payment)).toString('base64');
