import type { ConsumerMessages, JsMsg } from '@nats-io/jetstream';
import type { Pact, Payout } from '../machines/pact/types.js';
import type { PayoutPurpose, Rail } from '../rails/rail.js';
import type { CommandSender } from './command-sender.js';
import { decodeEntry, type PlannedPayouts } from './journal.js';
import type { PaidPayout } from './messages.js';
import { ensureDurableConsumer, PULL, type Nats } from './nats.js';
import { JOURNAL_STREAM, JOURNAL_WILDCARD, PAYOUT_CONSUMER } from './subjects.js';

const RETRY_DELAY_MS = 2_000;
const PENDING_REFRESH_MS = 200;
/** The planned payouts the pact's record holds, on the record's own rail and asset. */
function payableOf(planned: PlannedPayouts, pact: Pact | undefined): PlannedPayouts {
  if (!pact) return { ...planned, items: [] };
  const held = (p: Payout) => pact.payouts.some((q) => q.key === p.key && q.party === p.party && q.kind === p.kind && q.amount === p.amount);
  return { rail: pact.rail, asset: pact.asset, items: planned.items.filter(held) };
}

const purposeOf = (payout: Payout): PayoutPurpose => (payout.kind === 'pot' || payout.kind === 'fee' ? 'release' : 'refund');

/**
 * The pact as the read model holds it once it has replayed the journal up to `seq`; `behind` while it has
 * not yet.
 */
export type RecordAt = (pactId: string, seq: number) => Promise<{ pact: Pact | undefined } | 'behind'>;

/**
 * Executes the payouts each journal entry planned, on the pact's rail, keyed per payout, then records the
 * rail references on the pact. The journal message is acknowledged only after that, so a crash anywhere
 * leads to a retry, and the rail's keys make the retry pay nothing twice.
 *
 * It pays only what the pact itself holds: a payout of the entry must be in the pact's record, as the
 * machine replayed it, with the same party, kind and amount. An entry written into the journal by anything
 * but an actor host (the machine refuses it, so the record never has its payouts) pays nothing.
 */
export class PayoutWorker {
  private messages: ConsumerMessages | undefined;
  private refresher: NodeJS.Timeout | undefined;

  constructor(
    private readonly nats: Nats,
    private readonly rails: ReadonlyMap<string, Rail>,
    private readonly bus: CommandSender,
    private readonly recordAt: RecordAt,
  ) {}

  async start(): Promise<void> {
    await ensureDurableConsumer(this.nats.jsm, JOURNAL_STREAM, {
      name: PAYOUT_CONSUMER,
      filterSubject: JOURNAL_WILDCARD,
      ackWaitMs: 10_000,
      maxAckPending: 512,
    });
    const consumer = await this.nats.js.consumers.get(JOURNAL_STREAM, PAYOUT_CONSUMER);
    this.messages = await consumer.consume({ ...PULL, max_messages: 128 });
    void (async () => {
      for await (const message of this.messages!) void this.handle(message);
    })();
    await this.refreshPending();
    let refreshing = false;
    this.refresher = setInterval(() => {
      if (refreshing) return;
      refreshing = true;
      void this.refreshPending().finally(() => (refreshing = false));
    }, PENDING_REFRESH_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.refresher);
    await this.messages?.close();
  }

  /**
   * Journal entries whose payouts are not yet all executed and recorded, as last asked of NATS (every
   * PENDING_REFRESH_MS), so that a reader never waits on NATS; `at` says when it was asked.
   */
  get pending(): { count: number; at: number } {
    return this.lastPending;
  }

  private lastPending = { count: 0, at: 0 };

  private async refreshPending(): Promise<void> {
    try {
      const info = await this.nats.jsm.consumers.info(JOURNAL_STREAM, PAYOUT_CONSUMER);
      this.lastPending = { count: info.num_pending + info.num_ack_pending, at: Date.now() };
    } catch {
      // NATS is away: keep the last figure, its `at` shows its age
    }
  }

  private async handle(message: JsMsg): Promise<void> {
    const entry = decodeEntry(message.data, message.subject);
    if (!entry) return message.term(); // not a journal entry: nothing to pay
    const planned = entry.payouts;
    if (!planned) return message.ack();
    try {
      const record = await this.recordAt(entry.pactId, message.seq);
      if (record === 'behind') throw new Error('the read model has not reached this entry yet');
      const payable = payableOf(planned, record.pact);
      if (payable.items.length < planned.items.length) {
        console.error(`journal entry ${message.seq} of ${entry.pactId} plans payouts its pact does not hold: those are not paid`);
      }
      const rail = this.rails.get(payable.rail);
      if (!rail) throw new Error(`rail ${payable.rail} is not configured`);
      const paid = await this.execute(rail, entry.pactId, payable, () => message.working());
      if (paid.length > 0) {
        const reply = await this.bus.send(entry.pactId, { type: 'recordPayouts', paid });
        if (!reply.ok) throw new Error(`recording payouts failed: ${reply.error.error}`);
      }
      if (paid.length === payable.items.length) message.ack();
      else message.nak(RETRY_DELAY_MS);
    } catch (error) {
      console.error(`payouts of ${entry.pactId} nonce ${entry.nonce} will be retried:`, String(error));
      message.nak(RETRY_DELAY_MS);
    }
  }

  private async execute(rail: Rail, pactId: string, planned: PlannedPayouts, stillWorking: () => void) {
    const paid: PaidPayout[] = [];
    for (const payout of planned.items) {
      stillWorking();
      try {
        const receipt = await rail.payout({
          key: payout.key,
          pactId,
          payee: payout.party,
          amount: { amount: payout.amount, asset: planned.asset },
          purpose: purposeOf(payout),
        });
        paid.push({ key: payout.key, railRef: receipt.ref });
      } catch (error) {
        console.error(`payout ${payout.key} failed:`, String(error));
      }
    }
    return paid;
  }
}
