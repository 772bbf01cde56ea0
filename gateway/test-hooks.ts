import { tmpdir } from 'node:os';
import { resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { EvaluatorConfig } from '../evaluator/config.js';
import { stubVerdict } from '../evaluator/config.js';
import { EVALUATOR_MODES } from '../evaluator/judge.js';
import { judgeOf } from '../evaluator/judge-of.js';
import type { EvaluatorRole } from '../evaluator/role.js';
import { pactError } from '../protocol/errors.js';
import { sendError } from './errors.js';
import type { Keeper } from '../actors/keeper.js';
import type { Reconciler } from '../actors/reconciler.js';
import type { AcceptanceReconciler } from '../actors/acceptance-reconciler.js';
import type { Projector } from '../projection/projector.js';
import type { MockRail } from '../rails/mock/mock-rail.js';
import type { ManualOffsetClock } from '../runtime/clock.js';
import type { PartyId } from '../protocol/party.js';
import { partyId } from '../protocol/schemas.js';

export interface TestHookDeps {
  clock: ManualOffsetClock;
  keeper: Keeper;
  reconciler: Reconciler;
  acceptances: AcceptanceReconciler;
  projector: Projector;
  mockRail: MockRail;
  evaluator: EvaluatorRole;
  evaluatorConfig: EvaluatorConfig;
  dataDir: string;
}

const evaluatorBody = {
  type: 'object',
  required: ['mode'],
  additionalProperties: false,
  properties: {
    mode: { type: 'string', enum: ['none', ...EVALUATOR_MODES] },
    verdict: { type: 'object' },
    url: { type: 'string', minLength: 1 },
    apiKeyFile: { type: 'string', minLength: 1 },
  },
} as const;

type EvaluatorBody = { mode: EvaluatorConfig['mode']; verdict?: object; url?: string; apiKeyFile?: string };

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
    collect: {
      type: 'object',
      required: ['key', 'payer', 'amount'],
      additionalProperties: false,
      properties: { key: { type: 'string', minLength: 1 }, payer: partyId, amount: { type: 'string', pattern: '^(0|[1-9][0-9]*)$' } },
    },
  },
} as const;

type MockRailBody = {
  balances?: Record<string, string>;
  failNext?: 'collect' | 'release' | 'refund';
  /** A collect made as the actor makes it, but never recorded on a pact: what a crash in between leaves. */
  collect?: { key: string; payer: PartyId; amount: string };
};

/** Mounted only with PACT_TEST_HOOKS=1. Never in production. */
export function registerTestHooks(app: FastifyInstance, deps: TestHookDeps): void {
  app.post<{ Body: { advanceMs?: number; set?: number } }>('/__test/clock', { schema: { body: clockBody } }, async (request) => {
    if (request.body.set !== undefined) deps.clock.set(request.body.set);
    if (request.body.advanceMs !== undefined) deps.clock.advance(request.body.advanceMs);
    await deps.projector.reached(await deps.keeper.tick()); // the reconciler reads the read model
    await deps.reconciler.run();
    await deps.acceptances.run();
    return { now: deps.clock.now() };
  });

  app.post<{ Body: MockRailBody }>('/__test/rails/mock', { schema: { body: mockRailBody } }, async (request) => {
    const { balances, failNext, collect } = request.body;
    if (balances) await deps.mockRail.setBalances(balances);
    if (failNext) deps.mockRail.failNext(failNext);
    if (collect) {
      const amount = { amount: collect.amount, asset: 'USDC' };
      await deps.mockRail.collect({ key: collect.key, pactId: '', payer: collect.payer, amount, proof: { scheme: 'mock' } });
    }
    return { ok: true };
  });

  // Switches this node's evaluator; `verdict` is the stub's, `url` and `apiKeyFile` a model mode's (a model
  // judge still uses each pact's pinned model and prompt).
  app.post<{ Body: EvaluatorBody }>('/__test/evaluator', { schema: { body: evaluatorBody } }, async (request, reply) => {
    const { mode, verdict, ...model } = request.body;
    // The key file is read and sent to `url`: only files the tests make (temporary or data directory).
    if (model.apiKeyFile && ![tmpdir(), deps.dataDir].some((dir) => resolve(model.apiKeyFile!).startsWith(`${resolve(dir)}/`))) {
      return sendError(reply, pactError('invalid_request', 'apiKeyFile must be under the temporary or the data directory', { field: 'apiKeyFile' }));
    }
    let judge;
    try {
      const stub = verdict === undefined ? deps.evaluatorConfig.stub : stubVerdict(verdict);
      judge = judgeOf({ ...deps.evaluatorConfig, ...model, mode, stub });
    } catch (error) {
      return sendError(reply, pactError('invalid_request', error instanceof Error ? error.message : String(error)));
    }
    await deps.evaluator.use(judge);
    return { mode: deps.evaluator.mode };
  });

  app.get('/__test/rails/mock', async () => ({
    balances: await deps.mockRail.balances(),
    operations: await deps.mockRail.operations(),
  }));
}
