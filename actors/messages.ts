import type { PactCommand } from '../machines/pact/commands.js';
import type { PactSpec } from '../machines/pact/spec.js';
import type { Pact } from '../machines/pact/types.js';
import type { PactError } from '../protocol/errors.js';
import type { PartyId } from '../protocol/party.js';

export type CreateCommand = { type: 'create'; spec: PactSpec; signer: PartyId };

/** What travels on `pact.cmd.<partition>`. `id` is also the Nats-Msg-Id. */
export interface CommandMessage {
  id: string;
  pactId: string;
  command: PactCommand | CreateCommand;
  /** Core-NATS subject the host answers on; absent when nobody waits. */
  replyTo?: string;
}

/** The host's answer. `seq` is the journal position the reader must reach to see this pact. */
export type CommandReply = { ok: true; pact: Pact; seq: number } | { ok: false; error: PactError };
