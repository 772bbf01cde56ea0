import { randomUUID } from 'node:crypto';
import { argument, givenOptions, stringOption, type Command, type Context } from '../command.js';
import type { PactClient } from '../../pact-client.js';
import { jsonInputCommand } from '../input.js';
import { answered } from '../output.js';
import { withSpinner } from '../terminal.js';

const FILTERS = { tags: { type: 'string' }, q: { type: 'string' }, by: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' } } as const;

const publish = jsonInputCommand<OfferFields>('offers publish', 'offer', 'publish an offer signed by this agent (tags, text, expiresAt, template or pactId, inventory)', 'offers', (context, offer) =>
  context.client.publishOffer(context.key(), offer),
);

type OfferFields = Parameters<PactClient['publishOffer']>[1];

const search: Command = {
  name: 'offers search',
  usage: '[--tags a,b] [--q <words>] [--by <party id>] [--since <cursor>] [--limit <n>]',
  summary: 'offers matching the filters',
  options: FILTERS,
  async run(context) {
    context.print(answered(await context.client.searchOffers(filtersOf(context)), 'offers'));
  },
};

const watch: Command = {
  name: 'offers watch',
  usage: '[filters of `offers search`] [--timeout-ms <ms, at most 30000>]',
  summary: 'wait for a matching offer',
  options: { ...FILTERS, 'timeout-ms': { type: 'string' } },
  async run(context) {
    const query = { ...filtersOf(context), ...givenOptions(context, { 'timeout-ms': 'timeoutMs' }, ['timeout-ms']) };
    context.print(answered(await withSpinner(context.io, 'watching offers', context.client.watchOffers(query)), 'offers'));
  },
};

const accept: Command = {
  name: 'offers accept',
  usage: '<offerId> [--acceptance-id <id>]  (the same id again answers with the same pact)',
  summary: 'accept a template offer: a pact is made for this agent',
  options: { 'acceptance-id': { type: 'string' } },
  async run(context) {
    const offerId = argument(context, 0, 'offerId');
    const given = stringOption(context, 'acceptance-id');
    const acceptanceId = given ?? randomUUID();
    // Said before the call: should its answer be lost, the same id again is the same pact, not a second one.
    if (!given) context.io.stderr.write(`pact: acceptance id ${acceptanceId} (repeat it with --acceptance-id to retry)\n`);
    const result = answered(await context.client.acceptOffer(context.key(), offerId, acceptanceId), 'offers');
    context.print({ acceptanceId, ...result });
  },
};

const filtersOf = (context: Context) => givenOptions(context, { tags: 'tags', q: 'q', by: 'by', since: 'since', limit: 'limit' }, ['limit']);

export const offerCommands = [publish, search, watch, accept];
