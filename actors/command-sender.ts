import { randomUUID } from 'node:crypto';
import { pactError } from '../protocol/errors.js';
import type { ActorHost } from './host.js';
import type { CommandReply, HostCommand } from './messages.js';
import { commandKindOf, partitionOf } from './subjects.js';

/** The answer to a command its host did not answer in time, whichever way it went. */
export const noAnswerInTime = (): CommandReply => ({
  ok: false,
  error: pactError('unavailable', 'no answer from the pact’s host in time; the outcome is unknown, read the pact and retry'),
});

/** Whatever takes a command to its pact's host and brings back the answer. */
export interface CommandSender {
  send(pactId: string, command: HostCommand): Promise<CommandReply>;
}

/**
 * Commands for partitions this process's host holds go straight to it; only the others travel over NATS.
 * Both ways meet the same admission and the same per-pact queue, so the journal's single writer holds.
 * A local command that has no answer within `timeoutMs` is answered 503, as a remote one would be: the
 * outcome is unknown and the caller reads the pact.
 */
export class LocalFirstSender implements CommandSender {
  constructor(
    private readonly host: ActorHost,
    private readonly remote: CommandSender,
    private readonly partitions: number,
    private readonly timeoutMs: number,
  ) {}

  send(pactId: string, command: HostCommand): Promise<CommandReply> {
    if (!this.host.holds(partitionOf(pactId, this.partitions))) return this.remote.send(pactId, command);
    const answer = this.host.run({ id: randomUUID(), pactId, command }, commandKindOf(command));
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<CommandReply>((resolve) => {
      timer = setTimeout(() => resolve(noAnswerInTime()), this.timeoutMs);
    });
    return Promise.race([answer, late]).finally(() => clearTimeout(timer));
  }
}
