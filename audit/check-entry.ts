import { isDeepStrictEqual } from 'node:util';
import { admitNow } from '../actors/admission.js';
import { signerOfEntry, type JournalEntry } from '../actors/journal.js';
import type { HostCommand } from '../actors/messages.js';
import { commandKindOf } from '../actors/subjects.js';
import type { AcceptCall } from '../machines/offer/types.js';
import { applyEntry } from '../actors/replay.js';
import { eventOf } from '../machines/pact/decide.js';
import { newPact } from '../machines/pact/spec.js';
import type { Pact } from '../machines/pact/types.js';

/** What an entry proves: its pact after it, or why it cannot be trusted. */
export type Checked = { pact: Pact; signedBy: string | undefined } | { problem: string };

const SIGNED_EVENTS = ['fund', 'withdraw', 'propose', 'cosign', 'object', 'cancel'] as const;

/**
 * Re-verifies one journal entry from the journal alone, as the actor host admitted it: the signed call runs
 * through the same admission (shape, signature, call-only checks) at the entry's time, the command it makes
 * must be the journaled event, and the machine must accept that event on the previous pact. Pokes and
 * recorded payouts carry no signature (NATS permissions guard them); the machine still has to accept them.
 */
export function checkEntry(previous: Pact | undefined, entry: JournalEntry): Checked {
  try {
    const problem = signatureProblem(entry);
    if (problem) return { problem };
    const pact = applyEntry(previous, entry);
    if (entry.state !== undefined && entry.state !== pact.state) return { problem: `the entry says ${entry.state}, the replay ${pact.state}` };
    return { pact, signedBy: signerOfEntry(entry) };
  } catch (error) {
    return { problem: error instanceof Error ? error.message : String(error) };
  }
}

function signatureProblem(entry: JournalEntry): string | undefined {
  const { event } = entry;
  if (event.type === 'poke' || event.type === 'payoutsRecorded') return entry.envelope ? 'an internal event carries a signed call' : undefined;
  if (event.type === 'verdict') {
    const { at, ...verdict } = event.verdict;
    return commandProblem(entry, { type: 'verdict', verdict }, at);
  }
  if (!entry.envelope) return `a ${event.type} without the signed call that asked for it`;
  if (entry.offer && event.type !== 'created') return `an offer on a ${event.type}, which creates no pact`;
  if (event.type === 'created') return createdProblem(entry, event.pact);
  if (!(SIGNED_EVENTS as readonly string[]).includes(event.type)) return `an event of unknown type ${String(event.type)}`;
  if (entry.envelope.stateNonce !== entry.nonce - 1) return `the call was signed for nonce ${entry.envelope.stateNonce}`;
  return commandProblem(entry, { type: 'signed', envelope: entry.envelope, payment: '{}' }, event.at);
}

/** Admits `command` as the host did at `at`, and compares the event it makes with the journaled one. */
function commandProblem(entry: JournalEntry, command: HostCommand, at: number): string | undefined {
  const admission = admitNow(entry.pactId, command, 'signed', undefined);
  if ('error' in admission) return `${admission.error.error}: ${admission.error.message}`;
  const admitted = admission.command;
  if (admitted.type === 'create') return 'a create call on a pact that exists';
  if (admitted.type === 'fund') {
    const event = entry.event;
    return event.type === 'fund' && event.party === admitted.signer ? undefined : 'the fund event is not the signer’s';
  }
  return isDeepStrictEqual(eventOf(admitted, at), entry.event) ? undefined : `the ${entry.event.type} event is not what the call asked`;
}

function createdProblem(entry: JournalEntry, pact: Pact): string | undefined {
  if (entry.nonce !== 0) return 'a creation at a nonce other than 0';
  // A pact made by an offer acceptance carries the publisher's signed offer beside the accepter's call.
  const command: HostCommand = entry.offer
    ? { type: 'accepted', offer: entry.offer, envelope: entry.envelope as AcceptCall }
    : { type: 'signed', envelope: entry.envelope! };
  const admission = admitNow(entry.pactId, command, commandKindOf(command), undefined);
  if ('error' in admission) return `${admission.error.error}: ${admission.error.message}`;
  if (admission.command.type !== 'create') return `the first entry's call is ${entry.envelope!.action}`;
  const expected = newPact({
    id: entry.pactId,
    spec: admission.command.spec,
    createdBy: admission.command.signer,
    at: pact.createdAt,
    policy: { evaluator: pact.evaluator, arbitrationFeeRecipient: pact.arbitrationFeeRecipient },
    escrowAccount: pact.escrowAccount,
    ...(admission.command.sourceOffer ? { sourceOffer: admission.command.sourceOffer } : {}),
  });
  return isDeepStrictEqual(expected, pact) ? undefined : 'the initial record is not what the create call asked';
}
