import type { FastifyInstance } from 'fastify';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ActorHost } from '../actors/host.js';
import type { PayoutWorker } from '../actors/payout-worker.js';
import type { Projector } from '../projection/projector.js';
import type { ServerPolicy } from '../machines/pact/spec.js';
import type { PartyId } from '../protocol/party.js';
import type { ReadModel } from '../projection/read-model.js';
import { railReady, type Rail, type RailHealth } from '../rails/rail.js';
import type { AccessGate } from '../access/gate.js';
import type { Clock } from '../runtime/clock.js';

export interface HealthDeps {
  version: string;
  clock: Clock;
  rails: ReadonlyMap<string, Rail>;
  policy: ServerPolicy;
  serverParty: PartyId;
  host: ActorHost;
  payoutWorker: PayoutWorker;
  readModel: ReadModel;
  projector: Projector;
  /** Every NATS connection of the node (one per role, or one). */
  natsConnections: NatsConnection[];
  access: { gate: Pick<AccessGate, 'mode'> };
}

const NATS_ANSWER_MS = 500;

/** Each rail's own report, asked now: `GET /health` and the landing page show the same. */
export function railHealthOf(rails: ReadonlyMap<string, Rail>): Promise<(readonly [string, RailHealth])[]> {
  return Promise.all([...rails.values()].map(async (rail) => [rail.name, await rail.health()] as const));
}

/** Whether every connection reaches NATS within NATS_ANSWER_MS (a flush waits for the server's answer). */
async function natsReachable(connections: NatsConnection[]): Promise<boolean> {
  const timeout = new Promise<false>((resolve) => setTimeout(() => resolve(false), NATS_ANSWER_MS).unref());
  const flushed = Promise.all(connections.map((nc) => nc.flush())).then(() => true, () => false);
  return Promise.race([flushed, timeout]);
}

/**
 * `GET /health`: what a client compares before funding, and what an operator watches. It answers at once
 * from kept figures (state counts, the payout worker's last look) and says `ok: false`, with `problems`,
 * while NATS or a rail is away.
 */
export function registerHealth(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/health', async () => {
    const rails = [...deps.rails.values()];
    const [railHealth, natsUp, counts] = await Promise.all([
      railHealthOf(deps.rails),
      natsReachable(deps.natsConnections),
      deps.projector.allWritten(NATS_ANSWER_MS).then(() => deps.readModel.stateCounts()), // counts with this node's latest writes
    ]);
    const problems = [
      ...(natsUp ? [] : ['NATS does not answer: writes are refused (503) until it is back']),
      ...railHealth.filter(([, health]) => !railReady(health)).map(([name]) => `rail ${name} is not ready`),
    ];
    const payouts = deps.payoutWorker.pending;
    return {
      ok: problems.length === 0,
      ...(problems.length > 0 ? { problems } : {}),
      time: deps.clock.now(),
      version: deps.version,
      rails: rails.map((rail) => rail.name),
      access: { mode: deps.access.gate.mode },
      evaluator: deps.policy.evaluator,
      arbitrationFeeRecipient: deps.policy.arbitrationFeeRecipient,
      serverParty: deps.serverParty,
      paymentRails: Object.fromEntries(railHealth),
      payoutReadiness: { treasury: Object.fromEntries(railHealth.map(([name, health]) => [name, health.live && health.payoutsReady])) },
      pending: {
        deadlines: counts.CREATED + counts.ACTIVE + counts.PROPOSED + counts.DISPUTED, // every open pact has one
        payouts: payouts.count,
        payoutsCheckedAt: payouts.at,
        disputes: counts.DISPUTED,
      },
      durableKeys: { evaluator: true, server: true },
      actors: { live: deps.host.liveActors, activations: deps.host.activations.summary() },
    };
  });
}
