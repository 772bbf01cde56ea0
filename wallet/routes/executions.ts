import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import { Ajv, type ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';
import type { WalletEvent } from '../../machines/wallet/events.js';
import type { Execution, ProviderAuthorization, Wallet } from '../../machines/wallet/types.js';
import { jcs } from '../../protocol/jcs.js';
import { crashPoint } from '../../runtime/crash-points.js';
import { walletOfBearer } from '../auth.js';
import { walletError, type WalletError } from '../errors.js';
import type { ProviderCaller, ProviderOutcome } from '../executions/provider-call.js';
import { PaymentRefused } from '../executions/payment-refused.js';
import { lostCall } from '../executions/lost-call.js';
import type { PaymentClaims } from '../payment-claims.js';
import type { TokenIndex } from '../token-index.js';
import type { IdempotencyStore } from '../idempotency.js';
import { idempotently } from '../idempotent-route.js';
import { executionCaptureOf, executionHoldOf, executionReleaseOf } from '../ledger.js';
import type { Capability, CapabilityProvider, Catalog } from '../registry/catalog.js';
import { sendWalletError } from '../reply.js';
import { newId } from '../secrets.js';
import { isoTime, usd, walletView } from '../views.js';
import type { WalletDesk } from '../wallet-desk.js';
import { BEARER, IDEMPOTENCY_HEADER } from './wallets.js';

export interface ExecutionRouteDeps {
  desk: WalletDesk;
  catalog: Catalog;
  providers: ProviderCaller;
  idempotency: IdempotencyStore;
  tokens: TokenIndex;
  claims: PaymentClaims;
}

const executeBody = {
  type: 'object',
  required: ['capabilityId', 'input'],
  additionalProperties: false,
  properties: {
    capabilityId: { type: 'string', minLength: 1, maxLength: 128 },
    registryId: { type: 'string', minLength: 1, maxLength: 64 },
    input: {},
    maxPrice: { type: 'object', required: ['amount', 'asset'], additionalProperties: false, properties: { amount: { type: 'string', pattern: '^(0|[1-9][0-9]{0,29})$' }, asset: { const: 'USD' } } },
  },
} as const;

type ExecuteBody = { capabilityId: string; registryId?: string; input: unknown; maxPrice?: { amount: string } };

/** SHA-256 hex of the JCS of a value (WALLET-DECISIONS.md: inputHash, outputHash). */
const hashOf = (value: unknown) => createHash('sha256').update(jcs(value ?? null)).digest('hex');

/** Input schemas compiled once (formats are not checked: the schema's shape and types are). */
const ajv = new Ajv({ strict: false, validateFormats: false, allErrors: false });
const validators = new WeakMap<object, ValidateFunction>();
function inputProblem(capability: Capability, input: unknown): string | undefined {
  let validate = validators.get(capability.inputSchema);
  if (!validate) validators.set(capability.inputSchema, (validate = ajv.compile(capability.inputSchema)));
  return validate(input) ? undefined : `input${validate.errors?.[0]?.instancePath ?? ''} ${validate.errors?.[0]?.message ?? 'is invalid'}`;
}

/** The receipt of an execution (WALLET-DECISIONS.md, Executions). */
export function receiptOf(walletId: string, execution: Execution) {
  return {
    id: execution.receiptId,
    executionId: execution.id,
    walletId,
    rail: execution.rail,
    provider: execution.provider,
    quoted: usd(execution.quoted),
    reserved: usd(execution.reserved),
    charged: usd(execution.charged),
    released: usd(execution.released),
    providerPayment: execution.providerPayment ?? {},
    inputHash: execution.inputHash,
    outputHash: execution.outputHash,
    ledgerTxIds: execution.ledgerTxIds,
    issuedAt: isoTime(execution.finishedAt ?? execution.createdAt),
  };
}

export function executionView(execution: Execution) {
  const { receiptId: _receipt, ledgerTxIds: _ledger, authorization: _authorization, createdAt, finishedAt, quoted, reserved, charged, released, ...rest } = execution;
  return { ...rest, quoted: usd(quoted), reserved: usd(reserved), charged: usd(charged), released: usd(released), createdAt: isoTime(createdAt), finishedAt: finishedAt === null ? null : isoTime(finishedAt) };
}

/** The provider to call: the one named, or the cheapest that can be called from here. */
function providerFor(capability: Capability, registryId: string | undefined, callers: ProviderCaller): CapabilityProvider | WalletError {
  const named = registryId === undefined ? capability.providers : capability.providers.filter((p) => p.registryId === registryId);
  if (named.length === 0) return walletError('invalid_request', `${registryId} is not a provider of ${capability.id}`, { field: 'registryId' });
  const callable = named.filter((p) => p.status === 'active' && callers.blocking(p).length === 0).sort((a, b) => Number(BigInt(a.price.amount) - BigInt(b.price.amount)));
  if (callable.length > 0) return callable[0]!;
  const blocking = [...new Set(named.flatMap((p) => (p.status === 'active' ? callers.blocking(p) : [`${p.registryId} does not answer`])))];
  return walletError('invalid_request', `no provider of ${capability.id} can be called from here: ${blocking.join('; ')}`, { field: registryId === undefined ? 'capabilityId' : 'registryId', blockingRequirements: blocking });
}

/**
 * `POST /v1/executions` and `GET /v1/executions/{id}` (bearer): the input checked against the capability's schema
 * (400), the price against `maxPrice` (422 `price_above_max`), the price held in the wallet's actor (402
 * `topup_required`, nothing created), the provider called, then the price captured on an answer, or the whole hold
 * released on a failure (502 `provider_failed` with the execution and its receipt). No answer after a payment may
 * have gone leaves it `ambiguous`, held for reconciliation, never called again.
 */
export function registerExecutionRoutes(app: FastifyInstance, deps: ExecutionRouteDeps): void {
  const { desk, catalog, providers, idempotency, tokens, claims } = deps;

  app.post<{ Body: ExecuteBody }>('/v1/executions', { schema: { operationId: 'executeCapability', security: BEARER, body: executeBody, headers: IDEMPOTENCY_HEADER } }, async (request, reply) => {
    const opened = await walletOfBearer(request, tokens, desk);
    if ('error' in opened) return sendWalletError(reply, opened.error);
    const walletId = opened.wallet.id;
    const body = request.body;
    const capability = catalog.get(body.capabilityId);
    if (!capability) return sendWalletError(reply, walletError('not_found', `no capability ${body.capabilityId}`));
    const invalid = inputProblem(capability, body.input);
    if (invalid) return sendWalletError(reply, walletError('invalid_request', invalid, { field: 'input' }));
    const provider = providerFor(capability, body.registryId, providers);
    if ('error' in provider) return sendWalletError(reply, provider);
    const price = BigInt(provider.price.amount);
    if (body.maxPrice && price > BigInt(body.maxPrice.amount)) return sendWalletError(reply, walletError('price_above_max', `${capability.id} costs ${price} micro-USD here, above maxPrice`, { price: usd(price), maxPrice: usd(body.maxPrice.amount) }));
    const run = idempotently(idempotency, `wallet:${walletId}:executions`, request, reply, async () => {
      const [executionId, receiptId] = idsFor(walletId, request.headers['idempotency-key']);
      let earlier: Execution | undefined;
      const started = await desk.change(walletId, (wallet, now): WalletEvent | WalletError => {
        earlier = wallet.executions?.[executionId];
        if (earlier) return ALREADY_BEGUN;
        if (wallet.status === 'suspended') return walletError('wallet_suspended', 'this wallet is suspended');
        const available = BigInt(wallet.balance) - BigInt(wallet.held);
        if (available < price) {
          return walletError('topup_required', 'the wallet does not have the price available: top it up', { required: usd(price), available: usd(available), shortfall: usd(price - available), topUp: { method: 'POST', path: '/v1/checkout' } });
        }
        const execution: Execution = {
          id: executionId,
          capabilityId: capability.id,
          rail: provider.rail,
          provider: { registryId: provider.registryId, resource: provider.resource, method: provider.method },
          status: 'pending',
          quoted: price.toString(),
          reserved: price.toString(),
          charged: '0',
          released: '0',
          inputHash: hashOf(body.input),
          outputHash: null,
          providerPayment: null,
          authorization: null,
          error: null,
          receiptId,
          createdAt: now,
          finishedAt: null,
          ledgerTxIds: [],
        };
        return { type: 'executionStarted', at: now, execution, ...executionHoldOf(wallet, execution, now) };
      });
      // The key's call began before (its answer lost to a crash): never called again, answered from its record.
      if (earlier) return answerOf(walletId, earlier, { withResult: false });
      // A refusal is not kept under the key (after a top-up the same key runs): the work is given up, not answered.
      if ('error' in started) throw new Refused(started.error);
      crashPoint('execution-held'); // the price held, the provider never called
      const paying = (authorization: ProviderAuthorization) => recordPaying(desk, claims, walletId, executionId, authorization);
      const outcome = await providers.call({ rail: provider.rail, resource: provider.resource, method: provider.method }, body.input, { limit: price, paying });
      return finish(desk, walletId, executionId, outcome);
    });
    return run.catch((error: unknown) => {
      if (error instanceof Refused) return sendWalletError(reply, error.refusal);
      throw error;
    });
  });

  app.get<{ Params: { id: string } }>('/v1/executions/:id', { schema: { operationId: 'getExecution', security: BEARER } }, async (request, reply) => {
    const opened = await walletOfBearer(request, tokens, desk);
    if ('error' in opened) return sendWalletError(reply, opened.error);
    const executions = opened.wallet.executions ?? {};
    const execution = Object.hasOwn(executions, request.params.id) ? executions[request.params.id] : undefined;
    if (!execution) return sendWalletError(reply, walletError('not_found', `no execution ${request.params.id} on this wallet`));
    return { execution: executionView(execution), receipt: receiptOf(opened.wallet.id, execution) };
  });
}

/** A refusal of the work under an Idempotency-Key: given up (the key is freed), answered as it is. */
class Refused extends Error {
  constructor(readonly refusal: WalletError) {
    super(refusal.message);
  }
}

const RECORD_ATTEMPTS = 3;
const ALREADY_BEGUN: WalletError = walletError('idempotency_in_progress', 'the call begun under this Idempotency-Key has no outcome yet: read GET /v1/executions/{id}');

/**
 * An execution's and its receipt's ids: from the wallet and the Idempotency-Key when there is one, so a retry after
 * a crash (its key's record lost) finds the call it made instead of making another.
 */
function idsFor(walletId: string, key: string | string[] | undefined): [string, string] {
  if (typeof key !== 'string') return [newId('ex'), newId('rc')];
  const digest = (kind: string) => bs58.encode(createHash('sha256').update(`${walletId}\n${kind}\n${key}`).digest()).slice(0, 24);
  return [`ex_${digest('execution')}`, `rc_${digest('receipt')}`];
}

/**
 * Records that the service's payer signed for the provider; the payment is sent only once this is recorded. Its
 * nonce is claimed first, once in the deployment: a provider that hands out one challenge twice is paid once.
 */
async function recordPaying(desk: WalletDesk, claims: PaymentClaims, walletId: string, executionId: string, authorization: ProviderAuthorization): Promise<void> {
  if (!(await claims.claim(authorization.from, authorization.nonce, walletId, executionId))) {
    throw new PaymentRefused('the provider asked for a payment this service has signed before (its nonce is taken)');
  }
  const recorded = await desk.change(walletId, (_wallet, at): WalletEvent => ({ type: 'executionPaying', at, executionId, authorization }));
  if ('error' in recorded) throw new Error(recorded.error.message);
}

const FAILURE_MESSAGES: Record<'failed' | 'ambiguous' | 'unanswered', (error: string | null) => string> = {
  failed: (error) => `the provider failed (${error}): the whole hold is released`,
  ambiguous: (error) => `no answer after the provider may have been paid (${error}): held until reconciled, never called again`,
  unanswered: (error) => `the provider took its payment and gave no usable answer (${error}): charged what it took, the rest released`,
};

/** The answer for an execution as recorded: 200 when it succeeded, else 502 `provider_failed` (under way: 409). */
function answerOf(walletId: string, execution: Execution, { withResult, result, wallet }: { withResult: boolean; result?: unknown; wallet?: Wallet }) {
  const answer = { execution: executionView(execution), receipt: receiptOf(walletId, execution) };
  switch (execution.status) {
    case 'pending':
    case 'paying':
      throw new Refused({ ...ALREADY_BEGUN, executionId: execution.id });
    case 'succeeded':
      return { status: 200, body: { ...answer, result: withResult ? result : null, ...(wallet ? { wallet: walletView(wallet) } : {}) } };
    default:
      return { status: 502, body: { ...walletError('provider_failed', FAILURE_MESSAGES[execution.status](execution.error)), ...answer } };
  }
}

/**
 * Records what the provider did and answers: 200 with the result, or 502 `provider_failed` with the receipt. Once
 * the hold is recorded nothing here throws (the Idempotency-Key must not be freed for a second call): a journal that
 * will not take the outcome is answered 503 with the execution's id, and the keeper ends it later.
 */
async function finish(desk: WalletDesk, walletId: string, executionId: string, outcome: ProviderOutcome) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await record(desk, walletId, executionId, outcome);
    } catch (error) {
      if (attempt === RECORD_ATTEMPTS) {
        console.error(`recording execution ${executionId} failed; the keeper ends it:`, String(error));
        return { status: 503, body: walletError('unavailable', `the outcome of execution ${executionId} could not be recorded now: read GET /v1/executions/${executionId} later`, { executionId }) };
      }
      await new Promise((resolve) => setTimeout(resolve, 200 * attempt));
    }
  }
}

async function record(desk: WalletDesk, walletId: string, executionId: string, outcome: ProviderOutcome) {
  const recorded = await desk.change(walletId, (wallet, now): WalletEvent | WalletError => {
    const execution = wallet.executions![executionId]!;
    if (outcome.ok) {
      return { type: 'executionSucceeded', at: now, executionId, charged: outcome.charged.toString(), outputHash: hashOf(outcome.output), providerPayment: outcome.payment, ...executionCaptureOf(wallet, execution, outcome.charged, now) };
    }
    if (outcome.paid === true) {
      return { type: 'executionUnanswered', at: now, executionId, charged: outcome.charged.toString(), reason: outcome.reason, providerPayment: outcome.payment, ...executionCaptureOf(wallet, execution, outcome.charged, now) };
    }
    if (outcome.paid === 'maybe') return lostCall(execution, now, outcome.reason);
    return { type: 'executionFailed', at: now, executionId, reason: outcome.reason, ...executionReleaseOf(wallet, execution, now) };
  });
  if ('error' in recorded) throw new Error(`recording execution ${executionId}: ${recorded.error.message}`);
  const wallet: Wallet = recorded.wallet;
  return answerOf(walletId, wallet.executions![executionId]!, { withResult: true, result: outcome.ok ? outcome.output : undefined, wallet });
}
