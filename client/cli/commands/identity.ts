import type { Health } from '../../pact-client.js';
import { stringOption, type Command } from '../command.js';
import { answered, CliError, usageError } from '../output.js';

const HOUR = 3_600_000;

const init: Command = {
  name: 'init',
  usage: '[--server <url>] [--force]',
  summary: 'make this agent’s Ed25519 key (in $PACT_HOME/agent.json, ~/.pact by default)',
  options: { force: { type: 'boolean' } },
  async run(context) {
    if (context.home.exists() && !context.values.force) {
      const existing = context.home.read();
      throw new CliError(`already initialised as ${existing?.partyId} (${context.home.file}); --force replaces the key for good`);
    }
    const agent = context.home.create(context.server);
    context.print({ partyId: agent.partyId, server: agent.server, file: context.home.file });
  },
};

const whoami: Command = {
  name: 'whoami',
  usage: '',
  summary: 'this agent’s party id, server, and access there',
  async run(context) {
    const party = context.key().party;
    const access = await context.client.accessOf(party).catch(() => undefined);
    context.print({ partyId: party, server: context.server, file: context.home.file, ...(access?.status === 200 ? { access: access.body } : {}) });
  },
};

const quickstart: Command = {
  name: 'quickstart',
  usage: '[--rail <rail>] [--counterparty <party id>] [--amount <minor units>] [--asset <code>]',
  summary: 'print a pact spec to edit and `pact create`, for a rail this server offers',
  options: { rail: { type: 'string' }, counterparty: { type: 'string' }, amount: { type: 'string' }, asset: { type: 'string' } },
  async run(context) {
    const health = answered(await context.client.health(), 'health');
    const rail = railOf(health, stringOption(context, 'rail'));
    const asset = stringOption(context, 'asset') ?? 'USDC';
    const money = (amount: bigint) => ({ amount: String(amount), asset });
    const price = stringOption(context, 'amount') ?? '1000000';
    if (!/^[0-9]{1,30}$/.test(price)) throw usageError(`--amount takes minor units (a whole number), not "${price}"`);
    const amount = BigInt(price);
    const me = context.key().party;
    const counterparty = stringOption(context, 'counterparty') ?? 'ed25519:<the counterparty’s party id>';
    // This agent does the work and proposes; its bond (a tenth of the price) is what it risks by proposing unfairly.
    context.print({
      rail,
      parties: [
        { party: me, deposit: money(0n), bond: money(amount / 10n), required: true },
        { party: counterparty, deposit: money(amount), bond: money(0n), required: true },
      ],
      proposer: me,
      terms: { spec: 'What the work is, what counts as delivered, and by when.' },
      minParties: 2,
      windows: { fund: 24 * HOUR, perform: 168 * HOUR, object: 72 * HOUR },
    });
  },
};

function railOf(health: Health, wanted: string | undefined): string {
  const rail = wanted ?? health.rails[0];
  if (rail === undefined || !health.rails.includes(rail)) {
    throw new CliError(`this server does not offer the ${rail ?? 'any'} rail; it offers ${health.rails.join(', ') || 'none'}`);
  }
  return rail;
}

export const identityCommands = [init, whoami, quickstart];
