import { MOCK_PROOF, type CancelApproval, type Requirement } from '../../pact-client.js';
import type { PactSpec } from '../../../machines/pact/spec.js';
import type { EvidenceItem, Share } from '../../../machines/pact/types.js';
import type { PartyId } from '../../../protocol/party.js';
import { argument, givenOptions, listOption, stringOption, type Command, type Context } from '../command.js';
import { jsonInputCommand, jsonValues, timeOption } from '../input.js';
import { answered, CliError, usageError } from '../output.js';
import { readStdin, withSpinner } from '../terminal.js';

const create = jsonInputCommand<PactSpec>('create', 'spec', 'create a pact from a spec (see `pact quickstart`)', 'pacts', (context, spec) =>
  context.client.create(context.key(), spec),
);

const fund: Command = {
  name: 'fund',
  usage: '<pactId> [--proof-stdin]',
  summary: 'fund this agent’s deposit and bond (402 flow); the mock rail pays itself, others take the proof on stdin',
  options: { 'proof-stdin': { type: 'boolean' } },
  async run(context) {
    const pactId = argument(context, 0, 'pactId');
    const pay = async (requirement: Requirement) => {
      if (context.values['proof-stdin']) return proofText((await readStdin(context.io)).toString('utf8'));
      if (requirement.rail === 'mock') return MOCK_PROOF;
      throw new CliError(`the ${requirement.rail} rail asks for ${requirement.amount.amount} ${requirement.amount.asset} to ${requirement.payTo}; pay it and give the proof on stdin with --proof-stdin`, 1, { requirement });
    };
    context.print(answered(await withSpinner(context.io, 'funding', context.client.fundWith(context.key(), pactId, pay)), 'funding'));
  },
};

/**
 * A payment proof as given on stdin: JSON or base64 JSON, sent as it is. It is a secret: a proof that is neither
 * is refused without being echoed.
 */
function proofText(text: string): string {
  const proof = text.trim();
  const decoded = /^[A-Za-z0-9+/=_-]+$/.test(proof) ? Buffer.from(proof, 'base64').toString('utf8') : proof;
  try {
    JSON.parse(decoded);
    return proof;
  } catch {
    throw new CliError('the proof on stdin is neither JSON nor base64-encoded JSON');
  }
}

const withdraw = pactCall('withdraw', 'take this agent’s deposit and bond back before the pact is active', (context, id) => context.client.withdraw(context.key(), id));
const cosign = pactCall('cosign', 'accept the proposal (the last cosign settles it)', (context, id) => context.client.cosign(context.key(), id));
const poke = pactCall('poke', 'run a deadline that is due (anyone may)', (context, id) => context.client.poke(id));

const get: Command = {
  name: 'get',
  usage: '<pactId>',
  summary: 'a pact’s record',
  async run(context) {
    context.print(answered(await context.client.get(argument(context, 0, 'pactId')), 'pacts'));
  },
};

const list: Command = {
  name: 'list',
  usage: '[--mine | --party <party id>] [--state <STATE>] [--group <offerId>] [--since <ms>] [--limit <n>]',
  summary: 'pacts matching the filters, newest first',
  options: { mine: { type: 'boolean' }, party: { type: 'string' }, state: { type: 'string' }, group: { type: 'string' }, since: { type: 'string' }, limit: { type: 'string' } },
  async run(context) {
    if (context.values.mine && context.values.party) throw usageError('--mine and --party name the party twice');
    const query = givenOptions(context, { party: 'party', state: 'state', group: 'groupId', since: 'since', limit: 'limit' }, ['since', 'limit']);
    if (context.values.mine) query.party = context.key().party;
    context.print(answered(await context.client.list(query), 'pacts'));
  },
};

const propose: Command = {
  name: 'propose',
  usage: '<pactId> --dist <party:bp,...> [--blob <sha256>]... [--url <url>]... [--note <text>]',
  summary: 'propose how the pot is split (basis points summing to 10000), with the evidence',
  options: { dist: { type: 'string' }, blob: { type: 'string', multiple: true }, url: { type: 'string', multiple: true }, note: { type: 'string' } },
  async run(context) {
    const pactId = argument(context, 0, 'pactId');
    const dist = stringOption(context, 'dist');
    if (!dist) throw usageError('--dist is required, e.g. --dist ed25519:abc:10000');
    const note = stringOption(context, 'note');
    const evidence: EvidenceItem[] = [
      ...listOption(context, 'blob').map((blob) => ({ blob })),
      ...listOption(context, 'url').map((url) => ({ url })),
      ...(note ? [{ note }] : []),
    ];
    context.print(answered(await context.client.propose(context.key(), pactId, { evidence, distribution: distributionOf(dist) }), 'proposals'));
  },
};

/** `party:bp,party:bp`, each split on its last colon (a party id has one of its own). */
export function distributionOf(text: string): Share[] {
  return text.split(',').map((entry) => {
    const at = entry.lastIndexOf(':');
    const bp = entry.slice(at + 1).trim();
    if (at <= 0 || !/^[0-9]+$/.test(bp)) throw usageError(`--dist entry "${entry}" is not <party>:<basis points>`);
    return { party: entry.slice(0, at).trim() as PartyId, bp: Number(bp) };
  });
}

const object: Command = {
  name: 'object',
  usage: '<pactId> --reason <text>',
  summary: 'dispute the proposal; the evaluator decides',
  options: { reason: { type: 'string' } },
  async run(context) {
    const reason = stringOption(context, 'reason');
    if (!reason) throw usageError('--reason is required');
    context.print(answered(await context.client.object(context.key(), argument(context, 0, 'pactId'), reason), 'objections'));
  },
};

const cancel: Command = {
  name: 'cancel',
  usage: '<pactId> --expires-at <ms|ISO time> [--signatures-stdin]',
  summary: 'mutual cancel: print this agent’s approval, or submit everyone’s (approvals on stdin)',
  options: { 'expires-at': { type: 'string' }, 'signatures-stdin': { type: 'boolean' } },
  async run(context) {
    const pactId = argument(context, 0, 'pactId');
    const expiresAt = timeOption(context, 'expires-at');
    if (expiresAt === undefined) throw usageError('--expires-at is required (the same time on every approval, before the pact’s current deadline)');
    const key = context.key();
    const stateNonce = await context.client.nonceOf(pactId);
    const mine = { ...context.client.cancelApproval(key, pactId, stateNonce, expiresAt), pactId, stateNonce, expiresAt };
    if (!context.values['signatures-stdin']) return context.print(mine);
    const collected = jsonValues((await readStdin(context.io)).toString('utf8')).map((value) => approvalOf(value, mine));
    const sigs = [...collected.filter((approval) => approval.signer !== key.party), mine].map(({ signer, sig }) => ({ signer, sig }));
    context.print(answered(await context.client.submitCancel(key, pactId, stateNonce, expiresAt, sigs), 'mutual cancel'));
  },
};

type PrintedApproval = CancelApproval & { pactId?: unknown; stateNonce?: unknown; expiresAt?: unknown };

/** An approval from stdin; one printed by `pact cancel` says what it was signed for, which must be what is submitted. */
function approvalOf(value: unknown, mine: Required<PrintedApproval>): CancelApproval {
  const approval = (value ?? {}) as Partial<PrintedApproval>;
  if (typeof approval.signer !== 'string' || typeof approval.sig !== 'string') throw new CliError('an approval on stdin lacks signer or sig');
  const differs = (['pactId', 'stateNonce', 'expiresAt'] as const).find((field) => approval[field] !== undefined && approval[field] !== mine[field]);
  if (differs === 'stateNonce') throw new CliError(`the pact moved since ${approval.signer} approved (nonce ${String(approval.stateNonce)}, now ${mine.stateNonce}): collect the approvals again`);
  if (differs) throw new CliError(`${approval.signer} approved ${differs} ${String(approval[differs])}, not ${String(mine[differs])}: use the same --expires-at`);
  return { signer: approval.signer, sig: approval.sig };
}

const bindAddress: Command = {
  name: 'bind-address',
  usage: '<rail> <address>',
  summary: 'publish this agent’s payout address on a rail (first write wins)',
  async run(context) {
    const [rail, address] = [argument(context, 0, 'rail'), argument(context, 1, 'address')];
    context.print(answered(await context.client.bindAddress(context.key(), rail, address), 'rail address binding'));
  },
};

function pactCall(name: string, summary: string, call: (context: Context, pactId: string) => Promise<Parameters<typeof answered>[0]>): Command {
  return {
    name,
    usage: '<pactId>',
    summary,
    async run(context) {
      context.print(answered(await call(context, argument(context, 0, 'pactId')), 'pacts'));
    },
  };
}

export const pactCommands = [create, fund, withdraw, get, list, propose, cosign, object, cancel, poke, bindAddress];
