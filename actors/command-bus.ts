import { randomUUID } from 'node:crypto';
import { createInbox, type Subscription } from '@nats-io/transport-node';
import { pactError } from '../protocol/errors.js';
import type { Nats } from './nats.js';
import { noAnswerInTime, type CommandSender } from './command-sender.js';
import type { CommandMessage, CommandReply, HostCommand } from './messages.js';
import { jsonBytes } from './json-bytes.js';
import { commandKindOf, commandSubject, partitionOf, REPLY_PREFIX } from './subjects.js';

type Waiter = { resolve: (reply: CommandReply) => void; timer: NodeJS.Timeout };

const decoder = new TextDecoder();

/**
 * Sends commands into PACT_CMD and waits for the owning host's answer on a private inbox.
 * A publish that fails is retried with the same Nats-Msg-Id, so JetStream keeps one copy.
 */
export class CommandBus implements CommandSender {
  private readonly waiters = new Map<string, Waiter>();
  private readonly inbox = createInbox(REPLY_PREFIX);
  private readonly subscription: Subscription;

  constructor(
    private readonly nats: Nats,
    private readonly partitions: number,
    private readonly timeoutMs: number,
  ) {
    this.subscription = nats.nc.subscribe(`${this.inbox}.*`, {
      callback: (error, message) => {
        if (error) return;
        const id = message.subject.slice(this.inbox.length + 1);
        const reply = parseReply(message.data);
        if (reply) this.settle(id, reply);
      },
    });
  }

  async send(pactId: string, command: HostCommand): Promise<CommandReply> {
    const id = randomUUID();
    const message: CommandMessage = { id, pactId, command, replyTo: `${this.inbox}.${id}` };
    const reply = new Promise<CommandReply>((resolve) => {
      const timer = setTimeout(() => this.settle(id, noAnswerInTime()), this.timeoutMs);
      this.waiters.set(id, { resolve, timer });
    });
    try {
      await this.publish(id, message);
    } catch {
      this.settle(id, { ok: false, error: pactError('unavailable', 'the command queue is not reachable; retry') });
    }
    return reply;
  }

  close(): void {
    this.subscription.unsubscribe();
    for (const id of [...this.waiters.keys()]) this.settle(id, { ok: false, error: pactError('unavailable', 'shutting down') });
  }

  private async publish(id: string, message: CommandMessage): Promise<void> {
    const subject = commandSubject(partitionOf(message.pactId, this.partitions), commandKindOf(message.command));
    const data = jsonBytes(message);
    for (let attempt = 1; ; attempt++) {
      try {
        await this.nats.publisher.publish(subject, data, { msgID: id });
        return;
      } catch (error) {
        if (attempt >= 3) throw error;
      }
    }
  }

  private settle(id: string, reply: CommandReply): void {
    const waiter = this.waiters.get(id);
    if (!waiter) return;
    this.waiters.delete(id);
    clearTimeout(waiter.timer);
    waiter.resolve(reply);
  }
}

/** A host's answer; anything else on the inbox (nothing of ours sends it) is ignored. */
function parseReply(data: Uint8Array): CommandReply | undefined {
  try {
    const reply = JSON.parse(decoder.decode(data)) as CommandReply;
    return typeof reply === 'object' && reply !== null && typeof reply.ok === 'boolean' ? reply : undefined;
  } catch {
    return undefined;
  }
}
