import { isAddress } from 'viem';
import type { RailName } from '../../machines/pact/types.js';
import type { CollectAt, CollectPlace, CollectRequest, PayoutRequest, Quote, QuoteRequest, Rail, RailHealth, RailReceipt } from '../rail.js';
import type { EvmEscrow } from './evm-escrow.js';

/**
 * What the x402 and mpp rails share: the escrow wallet on one chain holding one token, its payouts, its books and
 * its readiness. A rail adds only its wire format: the 402 it quotes and the proof it collects.
 */
export abstract class EvmRail implements Rail {
  abstract readonly name: RailName;
  abstract readonly needsRailAddress: boolean;

  constructor(protected readonly escrow: EvmEscrow) {}

  abstract quote(request: QuoteRequest): Quote;
  abstract collect(request: CollectRequest): Promise<RailReceipt>;

  get escrowAccount(): string {
    return this.escrow.address;
  }

  get ready(): boolean {
    return this.escrow.ready;
  }

  isAddress(address: string): boolean {
    return isAddress(address);
  }

  get asset(): string {
    return this.escrow.config.token.asset;
  }

  holds(asset: string): boolean {
    return asset === this.asset;
  }

  /** The collect of `key` made on this rail (the escrow wallet is shared: one made on the other rail is not this one's). */
  async collected(key: string): Promise<RailReceipt | undefined> {
    const tx = await this.escrow.collected(key);
    return tx?.purpose.kind === 'collect' && tx.purpose.rail === this.name ? { key, ref: tx.hash } : undefined;
  }

  payout(request: PayoutRequest): Promise<RailReceipt> {
    return this.escrow.payout(this.name, request);
  }

  collects(from: number): AsyncIterable<CollectAt> {
    return this.escrow.collects(this.name, from);
  }

  collectAt(position: number): Promise<CollectPlace> {
    return this.escrow.collectAt(this.name, position);
  }

  health(): Promise<RailHealth> {
    return this.escrow.health();
  }
}
