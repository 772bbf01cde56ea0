import { ExactEvmScheme } from '@x402/evm/exact/client';
import { ExactEvmSchemeV1 } from '@x402/evm/v1';
import { Challenge } from 'mppx';
import { evm, Mppx } from 'mppx/client';
import type { LocalAccount } from 'viem';
import { chainIdOfNetwork } from '../rails/evm/networks.js';
import type { HttpResult, Requirement } from './pact-client.js';

// Payers for the real rails: they sign with a local EVM key (it never leaves the process) and spend at most a
// budget, whatever the server asks. Kept apart from the SDK's entry so that the CLI and browsers need no viem.

export interface PayerOptions {
  account: LocalAccount;
  /** The most this payer ever pays in total, in token units: a requirement beyond what is left is refused. */
  budget: bigint;
  /**
   * The token the budget counts (its address) and the chain it lives on: a requirement naming another is refused.
   * Without them the payer signs for whatever token the server names, so set them (GET /health shows both).
   */
  token?: string;
  chainId?: number;
}

export class PaymentRefused extends Error {}

/** Spends from a budget once per payment; a refusal spends nothing. */
function budgetOf(total: bigint) {
  let left = total;
  return (amount: bigint) => {
    if (amount <= 0n || amount > left) throw new PaymentRefused(`a payment of ${amount} is beyond what this payer may still spend (${left})`);
    left -= amount;
  };
}

/** The token and chain the server names must be the pinned ones; a chain that cannot be told is not the pinned one. */
function pinned(token: string | undefined, asset: string, chainId: number | undefined, chain: number | undefined): void {
  if (token !== undefined && token.toLowerCase() !== asset.toLowerCase()) throw new PaymentRefused(`the server asks for token ${asset}, not ${token}`);
  if (chainId !== undefined && chain !== chainId) throw new PaymentRefused(`the server asks for chain ${chain ?? 'unknown'}, not ${chainId}`);
}

type AcceptsEntry = { scheme: string; network: string; amount?: string; maxAmountRequired?: string; payTo: string; asset: string; maxTimeoutSeconds: number; extra?: Record<string, unknown> };

/**
 * Pays an x402 requirement (`fundWith`'s `pay`): signs an EIP-3009 authorization for the `exact` entry of the
 * version asked (v2 by default, on its CAIP-2 network; v1 on its network name), as base64 X-PAYMENT text.
 */
export function x402Payer({ account, budget, token, chainId, version = 2 }: PayerOptions & { version?: 1 | 2 }) {
  const spend = budgetOf(budget);
  return async (requirement: Requirement): Promise<string> => {
    const accepts = ((requirement.railData as { accepts?: AcceptsEntry[] }).accepts ?? []).filter((entry) => entry.scheme === 'exact');
    const entry = accepts.find((e) => e.network.includes(':') === (version === 2));
    if (!entry) throw new PaymentRefused(`the requirement offers no x402 v${version} exact payment`);
    if (entry.payTo !== requirement.payTo) throw new PaymentRefused('the requirement pays somewhere other than its escrow');
    pinned(token, entry.asset, chainId, chainIdOfNetwork(entry.network));
    spend(BigInt(entry.amount ?? entry.maxAmountRequired ?? '0'));
    const payment =
      version === 2
        ? { ...(await new ExactEvmScheme(account).createPaymentPayload(2, entry as never)), accepted: entry }
        : await new ExactEvmSchemeV1(account).createPaymentPayload(1, entry as never);
    return btoa(JSON.stringify(payment)); // the payload is ASCII JSON
  };
}

/**
 * Answers an mpp 402 (`fundWithMpp`'s `pay`): a credential for the challenge in `WWW-Authenticate: Payment`,
 * an EIP-3009 authorization of exactly the challenge's amount, bound to that challenge.
 */
export function mppPayer({ account, budget, token, chainId }: PayerOptions) {
  const spend = budgetOf(budget);
  return async (answer: HttpResult<{ requirement: Requirement }>): Promise<string> => {
    const challenge = Challenge.fromHeaders(answer.headers);
    const railData = answer.body.requirement.railData as { chainId: number; authorization: { name: string; version: string } };
    const request = challenge.request as { amount: string; currency: string; methodDetails?: { chainId?: number } };
    pinned(token, request.currency, chainId, request.methodDetails?.chainId);
    spend(BigInt(request.amount));
    const payer = Mppx.create({ methods: [evm.charge({ account, authorization: railData.authorization, networks: [railData.chainId] })], polyfill: false });
    return payer.createCredential(new Response(JSON.stringify(answer.body), { status: 402, headers: answer.headers }));
  };
}
