import type { FastifyInstance } from 'fastify';
import type { Keeper } from '../actors/keeper.js';
import type { MockRail } from '../rails/mock/mock-rail.js';
import type { ManualOffsetClock } from '../runtime/clock.js';
import { partyId } from './schemas.js';

export interface TestHookDeps {
  clock: ManualOffsetClock;
  keeper: Keeper;
  mockRail: MockRail;
}

const clockBody = {
  type: 'object',
  additionalProperties: false,
  properties: { advanceMs: { type: 'integer', minimum: 0 }, set: { type: 'integer', minimum: 0 } },
} as const;

const mockRailBody = {
  type: 'object',
  additionalProperties: false,
  properties: {
    balances: { type: 'object', propertyNames: { anyOf: [partyId, { const: 'mock:escrow' }] }, additionalProperties: { type: 'string', pattern: '^(0|[1-9][0-9]*)$' } },
    failNext: { type: 'string', enum: ['collect', 'release', 'refund'] },
  },
} as const;

/** Mounted only with PACT_TEST_HOOKS=1. Never in production. */
export function registerTestHooks(app: FastifyInstance, deps: TestHookDeps): void {
  app.post<{ Body: { advanceMs?: number; set?: number } }>('/__test/clock', { schema: { body: clockBody } }, async (request) => {
    if (request.body.set !== undefined) deps.clock.set(request.body.set);
    if (request.body.advanceMs !== undefined) deps.clock.advance(request.body.advanceMs);
    await deps.keeper.tick();
    return { now: deps.clock.now() };
  });

  app.post<{ Body: { balances?: Record<string, string>; failNext?: 'collect' | 'release' | 'refund' } }>(
    '/__test/rails/mock',
    { schema: { body: mockRailBody } },
    async (request) => {
      if (request.body.balances) await deps.mockRail.setBalances(request.body.balances);
      if (request.body.failNext) deps.mockRail.failNext(request.body.failNext);
      return { ok: true };
    },
  );

  app.get('/__test/rails/mock', async () => ({
    balances: await deps.mockRail.balances(),
    operations: await deps.mockRail.operations(),
  }));
}
