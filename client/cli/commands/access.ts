import { argument, stringOption, type Command } from '../command.js';
import { answered, usageError } from '../output.js';
import { readSecret } from '../terminal.js';

const access: Command = {
  name: 'access',
  usage: '[<party id>]  (this agent without one)',
  summary: 'the server’s access mode and a party’s status there',
  async run(context) {
    const party = context.positionals[0] ?? context.key().party;
    context.print(answered(await context.client.accessOf(party), 'access control'));
  },
};

const requestAccess: Command = {
  name: 'request-access',
  usage: '--email <address> [--use-case <text>]',
  summary: 'ask an invite-only server for access: it mails a six-digit code',
  options: { email: { type: 'string' }, 'use-case': { type: 'string' } },
  async run(context) {
    const email = stringOption(context, 'email');
    if (!email) throw usageError('--email is required');
    context.print(answered(await context.client.requestAccess(context.key(), email, stringOption(context, 'use-case')), 'access requests'));
  },
};

const verify: Command = {
  name: 'verify',
  usage: '  (the code from a hidden prompt, or from stdin)',
  summary: 'send back the code mailed by `pact request-access`',
  async run(context) {
    const code = await readSecret(context.io, 'code from the mail: ');
    if (!/^[0-9]{6}$/.test(code)) throw usageError('the code is six digits');
    context.print(answered(await context.client.verifyAccess(context.key(), code), 'access requests'));
  },
};

const admin: Command = {
  name: 'admin',
  usage: '<allow|revoke|allow-email|deny-email|pending> [--target <party id, email or @domain>] [--note <text>]',
  summary: 'an operator’s access call, signed with this agent’s key (the server’s admin key)',
  options: { target: { type: 'string' }, note: { type: 'string' } },
  async run(context) {
    const target = stringOption(context, 'target');
    const note = stringOption(context, 'note');
    const call = { action: argument(context, 0, 'action'), ...(target ? { target } : {}), ...(note ? { note } : {}) };
    context.print(answered(await context.client.adminAccess(context.key(), call), 'access administration'));
  },
};

export const accessCommands = [access, requestAccess, verify, admin];
