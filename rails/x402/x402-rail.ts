import { x402Facilitator } from '@x402/core/facilitator';
import type { Network, PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { toFacilitatorEvmSigner } from '@x402/evm';
import { registerExactEvmScheme } from '@x402/evm/exact/facilitator';
import type { Money } from '../../protocol/money.js';
import type { ChainReader } from '../evm/chain.js';
import type { EvmEscrow } from '../evm/evm-escrow.js';
import { shortError } from '../evm/escrow-wallet.js';
import { RailError, type CollectRequest, type Quote, type QuoteRequest, type RailReceipt } from '../rail.js';
import { EvmRail } from '../evm/evm-rail.js';
import { x402PaymentOf, type X402Payment } from './x402-payment.js';

/** How long a payer's authorization may be valid, as the requirement tells it. */
const MAX_TIMEOUT_SECONDS = 600;

/**
 * The x402 rail: a payer signs an EIP-3009 authorization for exactly the requirement, the server rebuilds the
 * requirement from the pact, verifies the payload with @x402/core and @x402/evm as its own facilitator, and
 * the escrow wallet settles it (recorded before broadcast, so a retry never settles twice).
 */
export class X402Rail extends EvmRail {
  readonly name = 'x402' as const;
  readonly needsRailAddress = false;
  private readonly facilitator = new x402Facilitator();

  constructor(escrow: EvmEscrow, reader: ChainReader) {
    super(escrow);
    const signer = toFacilitatorEvmSigner({
      address: escrow.address,
      readContract: (args) => reader.readContract(args as never),
      verifyTypedData: (args) => reader.verifyTypedData(args as never),
      getCode: (args) => reader.getCode(args),
      // Verification only: the escrow wallet settles, never the facilitator.
      writeContract: () => Promise.reject(new Error('the x402 facilitator does not settle here')),
      sendTransaction: () => Promise.reject(new Error('the x402 facilitator does not settle here')),
      waitForTransactionReceipt: (args) => reader.waitForTransactionReceipt(args),
    });
    registerExactEvmScheme(this.facilitator, { signer, networks: this.network });
  }

  /** `railData.accepts`: one `exact` entry on the chain's CAIP-2 network, and one on its v1 name when it has one. */
  quote({ amount }: QuoteRequest): Quote {
    const v2 = this.requirement(amount, this.network);
    const v1 = this.escrow.config.networkV1 === undefined ? [] : [this.requirement(amount, this.escrow.config.networkV1)];
    const accepts = [v2, ...v1].map((entry) => ({ ...entry, maxAmountRequired: entry.amount }));
    return { requirement: { rail: 'x402', amount, asset: amount.asset, payTo: this.escrow.address, railData: { x402Version: 2, accepts } } };
  }

  async collect(request: CollectRequest): Promise<RailReceipt> {
    const payment = x402PaymentOf(request.proof);
    if (!payment) throw new RailError('invalid_proof', 'X-PAYMENT is not an x402 exact payment (v1 or v2) with an EIP-3009 authorization');
    const requirement = this.requirementFor(payment, request.amount);
    const tx = await this.escrow.collect('x402', request, payment.signed, () => this.verify(request.proof, payment, requirement));
    const payer = tx.purpose.kind === 'collect' ? tx.purpose.payer : payment.signed.authorization.from; // a retry's answer names who paid
    const response = { success: true, transaction: tx.hash, network: payment.network, payer };
    const encoded = Buffer.from(JSON.stringify(response)).toString('base64');
    // v1 (and the spec) name it X-PAYMENT-RESPONSE, v2 PAYMENT-RESPONSE.
    return { key: request.key, ref: tx.hash, headers: { 'x-payment-response': encoded, 'payment-response': encoded } };
  }

  private get network(): Network {
    return `eip155:${this.escrow.config.chainId}`;
  }

  private requirement(amount: Money, network: string): PaymentRequirements {
    const { token } = this.escrow.config;
    return {
      scheme: 'exact',
      network: network as Network,
      asset: token.address,
      amount: amount.amount,
      payTo: this.escrow.address,
      maxTimeoutSeconds: MAX_TIMEOUT_SECONDS,
      extra: { name: token.name, version: token.version },
    };
  }

  /** The requirement the payment must meet, rebuilt from the pact: only its network follows the payment's version. */
  private requirementFor(payment: X402Payment, amount: Money): PaymentRequirements {
    const network = payment.version === 1 ? this.escrow.config.networkV1 : this.network;
    if (network === undefined || payment.network !== network) {
      throw new RailError('wrong_network', `the payment is for ${payment.network}; this rail takes ${this.network}${this.escrow.config.networkV1 ? ` (v1: ${this.escrow.config.networkV1})` : ''}`);
    }
    return this.requirement(amount, network);
  }

  /** The facilitator's verdict on the payload against our requirement (its signature, its terms, a simulated settle). */
  private async verify(proof: unknown, payment: X402Payment, requirement: PaymentRequirements): Promise<void> {
    const checked =
      payment.version === 1
        ? { ...(proof as object), x402Version: 1 }
        : { x402Version: 2, accepted: requirement, payload: (proof as { payload: unknown }).payload };
    const v1Requirement = { ...requirement, maxAmountRequired: requirement.amount, resource: 'pact fund', description: 'fund a pact', mimeType: 'application/json' };
    const verdict = await this.facilitator
      .verify(checked as PaymentPayload, (payment.version === 1 ? v1Requirement : requirement) as PaymentRequirements)
      .catch((error: unknown) => {
        throw new RailError('rail_failure', `the payment could not be verified now: ${shortError(error)}`);
      });
    if (!verdict.isValid) throw new RailError('invalid_proof', `the payment does not verify: ${verdict.invalidReason ?? 'no reason given'}`);
  }
}

