import type { Stack } from '../tests/support/stack.js';
import type { OfferVocabulary } from './jobs.js';
import type { LoadGenerator } from './load-generator.js';
import { rssMiB, stackProcesses, type Processes } from './processes.js';
import { besideBare } from './reads.js';
import { cpuLines, failureLines, print, routeLines } from './report.js';
import { settings } from './settings.js';
import { fixed } from './stats.js';

/** 200 tags, three an offer: each tag names 1.5% of the offers; eight words of 2,000 in each text. */
const VOCABULARY: OfferVocabulary = { tags: 200, words: 2_000, tagsPerOffer: 3, wordsPerOffer: 8 };
const PAGE = 20;

/**
 * Offer search with many offers stored: `settings.offers` offers published through the service, then
 * searches by one tag, and by a tag and a word, beside a bare Fastify route answering the same bytes.
 */
export async function offerSearch(load: LoadGenerator, stack: Stack, clients: Processes): Promise<void> {
  const { offers: count, concurrency } = settings;
  console.log(`\noffers: ${count} pre-signed offers published, ${concurrency} in flight`);
  const { measured, cpu } = await load.timed({ kind: 'offers', url: stack.url, count, concurrency, vocabulary: VOCABULARY }, { ...clients, ...stackProcesses(stack) });
  print([
    `published ${measured.ids.length} of ${count} in ${fixed(measured.wallMs / 1000, 2)} s = ${fixed(measured.ids.length / (measured.wallMs / 1000))} offers/s (signing excluded)`,
    ...routeLines(measured),
    'CPU during the publishing',
    ...cpuLines(cpu).map((line) => `  ${line}`),
    ...failureLines('failures', measured),
    `memory after publishing  RSS pact service ${fixed(rssMiB(stack.serverPid!))} MiB`,
  ]);
  const tags = Array.from({ length: VOCABULARY.tags }, (_, i) => `t${i}`);
  await besideBare(load, stack, clients, {
    route: 'GET /offers?tags=',
    paths: tags.map((tag) => `/offers?tags=${tag}&limit=${PAGE}`),
    over: `${VOCABULARY.tags} tags, ${PAGE} offers a page, ${measured.ids.length} offers stored`,
  });
  // A word that half of a tag's offers hold, so the search reads past offers that do not match.
  await besideBare(load, stack, clients, {
    route: 'GET /offers?tags=&q=',
    paths: tags.map((tag, i) => `/offers?tags=${tag}&q=w${(i * 11) % VOCABULARY.words}&limit=${PAGE}`),
    over: `${VOCABULARY.tags} tag and word pairs, ${PAGE} offers a page at most`,
  });
}
