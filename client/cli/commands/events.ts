import { publicEvent, type PublicEventFields } from '../../stream.js';
import { givenOptions, stringOption, type Command } from '../command.js';
import { jsonInputCommand } from '../input.js';
import { answered, usageError } from '../output.js';
import { withSpinner } from '../terminal.js';

const publish = jsonInputCommand<PublicEventFields>('events publish', 'event', 'sign and publish a public event (kind, channel, body; tags, recipients, refs as you like)', 'the Agent Stream', (context, fields) =>
  context.client.publishEvent(publicEvent(context.key(), fields)),
);

const pull: Command = {
  name: 'events pull',
  usage: '[--cursor <c> | --start earliest|latest] [--limit <n>] [--wait <seconds>] [--filter <json>]',
  summary: 'events matching the filter, from a cursor; the answer’s nextCursor continues',
  options: { cursor: { type: 'string' }, start: { type: 'string' }, limit: { type: 'string' }, wait: { type: 'string' }, filter: { type: 'string' } },
  async run(context) {
    const request: Record<string, unknown> = givenOptions(context, { cursor: 'cursor', start: 'start', limit: 'limit', wait: 'waitSeconds' }, ['limit', 'wait']);
    const filter = stringOption(context, 'filter');
    if (filter) request.filter = parsed(filter);
    context.print(answered(await withSpinner(context.io, 'pulling', context.client.pull(request)), 'the Agent Stream'));
  },
};

function parsed(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw usageError('--filter takes JSON, e.g. {"public":{"channels":["general"]}}');
  }
}

export const eventCommands = [publish, pull];
