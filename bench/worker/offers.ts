import { sign } from 'node:crypto';
import { offerIdOf } from '../../machines/offer/rules.js';
import type { SignedOffer } from '../../machines/offer/types.js';
import { canonicalDigest } from '../../protocol/digest.js';
import type { Job, Measured, OfferVocabulary } from '../jobs.js';
import { inFlight, send, withPool, type PreparedRequest } from './http.js';
import { newSigner } from './presign.js';
import { Recorder } from './recorder.js';

const WEEK_MS = 7 * 86_400_000;

/** Publishes `count` offers (signed with node:crypto before the timing starts), `concurrency` in flight. */
export function prepareOffers(job: Extract<Job, { kind: 'offers' }>): () => Promise<Measured> {
  const offers = Array.from({ length: job.count }, (_, i) => signedOffer(i, job.vocabulary));
  return () =>
    withPool(job.url, job.concurrency, async (pool) => {
      const recorder = new Recorder();
      const start = performance.now();
      await inFlight(offers, job.concurrency, async ({ id, request }) => {
        if ((await send(pool, request, recorder)) !== undefined) recorder.ids.push(id);
      });
      return recorder.measured(performance.now() - start);
    });
}

/** Offer `i`: its tags and words spread evenly over the vocabulary, so that every tag names as many offers. */
function signedOffer(i: number, vocabulary: OfferVocabulary): { id: string; request: PreparedRequest } {
  const seller = newSigner();
  const pick = (count: number, of: number, stride: number) => Array.from({ length: count }, (_, k) => (i * stride + k * 7) % of);
  const unsigned = {
    by: seller.party,
    tags: pick(vocabulary.tagsPerOffer, vocabulary.tags, 3).map((n) => `t${n}`),
    text: pick(vocabulary.wordsPerOffer, vocabulary.words, 11).map((n) => `w${n}`).join(' '),
    expiresAt: Date.now() + WEEK_MS,
    template: {
      rail: 'mock',
      price: { amount: '1001', asset: 'USDC' },
      buyerBond: { amount: '75', asset: 'USDC' },
      sellerBond: { amount: '50', asset: 'USDC' },
      terms: { spec: `offer ${i}: summarise the paper in 200 words` },
    },
  } as const;
  const offer = { ...unsigned, sig: sign(null, canonicalDigest(unsigned), seller.privateKey).toString('hex') } as unknown as SignedOffer;
  return { id: offerIdOf(offer), request: { route: 'POST /offers', path: '/offers', body: JSON.stringify(offer), expect: 200 } };
}
