import type { FastifyInstance } from 'fastify';
import type { ActorHost } from '../actors/host.js';
import type { Keeper } from '../actors/keeper.js';
import type { PayoutWorker } from '../actors/payout-worker.js';
import type { ServerPolicy } from '../machines/pact/spec.js';
import type { PartyId } from '../protocol/party.js';
import type { ReadModel } from '../projection/read-model.js';
import type { Rail } from '../rails/rail.js';
import type { Clock } from '../runtime/clock.js';

export interface HealthDeps {
  version: string;
  clock: Clock;
  rails: ReadonlyMap<string, Rail>;
  policy: ServerPolicy;
  serverParty: PartyId;
  keeper: Keeper;
  host: ActorHost;
  payoutWorker: PayoutWorker;
  readModel: ReadModel;
}

/** `GET /health`: what a client compares before funding, and what an operator watches. */
export function registerHealth(app: FastifyInstance, deps: HealthDeps): void {
  app.get('/health', async () => {
    const rails = [...deps.rails.values()];
    const railHealth = await Promise.all(rails.map(async (rail) => [rail.name, await rail.health()] as const));
    return {
      ok: railHealth.every(([, health]) => health.live && health.solvency.ok),
      time: deps.clock.now(),
      version: deps.version,
      rails: rails.map((rail) => rail.name),
      access: { mode: 'open' },
      evaluator: deps.policy.evaluator,
      arbitrationFeeRecipient: deps.policy.arbitrationFeeRecipient,
      serverParty: deps.serverParty,
      paymentRails: Object.fromEntries(railHealth),
      payoutReadiness: { treasury: Object.fromEntries(railHealth.map(([name, health]) => [name, health.live])) },
      pending: {
        deadlines: deps.keeper.size,
        payouts: await deps.payoutWorker.pending(),
        disputes: await deps.readModel.countInState('DISPUTED'),
      },
      durableKeys: { evaluator: true, server: true },
      actors: { live: deps.host.liveActors },
    };
  });
}
