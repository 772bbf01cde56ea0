import type { OfferTemplate, SignedOffer } from '../../machines/offer/types.js';
import { signed, type KeyPair } from '../../protocol/sign.js';
import { usdc } from './pacts.js';

/** A template as the tests sell it: odd amounts, so that each one shows where it lands in the pact. */
export const template = (overrides: Partial<OfferTemplate> = {}): OfferTemplate => ({
  rail: 'mock',
  price: usdc(1001),
  buyerBond: usdc(75),
  sellerBond: usdc(50),
  terms: { spec: 'summarise the paper in 500 words' },
  ...overrides,
});

export const DAY_MS = 86_400_000;

/** An offer signed by `seller`, with a template unless `fields` names a pact; `fields` may add or override anything. */
export function offerBy(seller: KeyPair, now: number, fields: Record<string, unknown> = {}): SignedOffer {
  const body = { by: seller.party, tags: ['summaries'], text: 'Summaries of research papers', expiresAt: now + DAY_MS, ...('pactId' in fields ? {} : { template: template() }), ...fields };
  return signed(body, seller) as SignedOffer;
}
