import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { CommandBus } from '../actors/command-bus.js';
import type { CommandMessage, CommandReply } from '../actors/messages.js';
import type { PactCommand } from '../machines/pact/commands.js';
import { sharesProblem } from '../machines/pact/rules.js';
import { specProblem, type PactSpec } from '../machines/pact/spec.js';
import type { PactState, Proposal, VerdictBody } from '../machines/pact/types.js';
import { canonicalHashHex } from '../protocol/digest.js';
import { pactError, type PactError } from '../protocol/errors.js';
import type { PartyId } from '../protocol/party.js';
import { signedPart, type SignedCall } from '../protocol/signed-call.js';
import { verifySignature } from '../protocol/verify.js';
import type { ReadModel } from '../projection/read-model.js';
import type { Projector } from '../projection/projector.js';
import type { Clock } from '../runtime/clock.js';
import { sendError } from './errors.js';
import { listQuery, signedCallSchema, verdictSchema, type PactAction } from './schemas.js';
import { issuedAtProblem, scopeProblem, signatureProblem } from './signed-call.js';

export interface PactRouteDeps {
  bus: CommandBus;
  readModel: ReadModel;
  projector: Projector;
  clock: Clock;
}

const PACT_ID = /^p_[0-9a-f]{32}$/;
const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const READ_YOUR_WRITES_WAIT_MS = 5_000;

type Params = { id: string };
type Built = { command: PactCommand } | { error: PactError };

interface SignedRoute {
  path: string;
  action: PactAction;
  build: (body: SignedCall<unknown>, payment: string | undefined) => Built;
}

/** A route whose `call`, once the action's schema has passed, has the shape `T`. */
const signedRoute = <T>(path: string, action: PactAction, build: (body: SignedCall<T>, payment: string | undefined) => Built): SignedRoute => ({
  path,
  action,
  build: build as SignedRoute['build'],
});

/** How each signed route turns its verified call into a command. */
const SIGNED_ROUTES: SignedRoute[] = [
  signedRoute<Record<string, never>>('fund', 'pacts.fund', (body, payment) => {
    const proof = payment === undefined ? null : parsePaymentHeader(payment);
    if (proof === undefined) return { error: pactError('invalid_request', 'X-PAYMENT is neither JSON nor base64 JSON', { field: 'X-PAYMENT' }) };
    return { command: { type: 'fund', signer: body.signer, stateNonce: body.stateNonce, proof } };
  }),
  signedRoute('withdraw', 'pacts.withdraw', (body) => ({ command: { type: 'withdraw', signer: body.signer, stateNonce: body.stateNonce } })),
  signedRoute<Proposal>('propose', 'pacts.propose', (body) => {
    const problem = sharesProblem(body.call.distribution);
    if (problem) return { error: pactError('invalid_request', problem, { field: 'call.distribution' }) };
    return { command: { type: 'propose', signer: body.signer, stateNonce: body.stateNonce, proposal: body.call } };
  }),
  signedRoute('cosign', 'pacts.cosign', (body) => ({ command: { type: 'cosign', signer: body.signer, stateNonce: body.stateNonce } })),
  signedRoute<{ reason: string }>('object', 'pacts.object', (body) => ({
    command: { type: 'object', signer: body.signer, stateNonce: body.stateNonce, reason: body.call.reason },
  })),
  signedRoute('cancel', 'pacts.cancel', cancelCommand),
];

type Send = (pactId: string, command: CommandMessage['command']) => Promise<CommandReply>;
type Answer = (reply: FastifyReply, result: CommandReply) => Promise<FastifyReply>;

export function registerPactRoutes(app: FastifyInstance, deps: PactRouteDeps): void {
  const send: Send = (pactId, command) => deps.bus.send(pactId, command);
  const answer: Answer = async (reply, result) => {
    if (!result.ok) return sendError(reply, result.error);
    await deps.projector.reached(result.seq, READ_YOUR_WRITES_WAIT_MS); // the caller's next GET sees this write
    return reply.send({ pact: result.pact });
  };
  registerCreate(app, deps.clock, send, answer);
  for (const route of SIGNED_ROUTES) registerSignedRoute(app, route, send, answer);
  registerVerdict(app, send, answer);
  app.post<{ Params: Params }>('/pacts/:id/poke', async (request, reply) => {
    const { id } = request.params;
    if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
    return answer(reply, await send(id, { type: 'poke' }));
  });
  registerReads(app, deps.readModel);
}

function registerCreate(app: FastifyInstance, clock: Clock, send: Send, answer: Answer): void {
  app.post<{ Body: SignedCall<PactSpec> }>(
    '/pacts',
    { schema: { body: signedCallSchema('pacts.create') }, preValidation: signedForThisRoute('pacts.create') },
    async (request, reply) => {
      const body = request.body;
      const refused =
        signatureProblem(body) ??
        (body.stateNonce !== 0 ? pactError('invalid_request', 'create takes stateNonce 0', { field: 'stateNonce' }) : undefined) ??
        specProblem(body.call) ??
        issuedAtProblem(body.issuedAt, clock.now());
      if (refused) return sendError(reply, refused);
      const pactId = `p_${canonicalHashHex(signedPart(body)).slice(0, 32)}`; // a replay names the same pact
      return answer(reply, await send(pactId, { type: 'create', spec: body.call, signer: body.signer }));
    },
  );
}

function registerSignedRoute(app: FastifyInstance, route: SignedRoute, send: Send, answer: Answer): void {
  app.post<{ Params: Params; Body: SignedCall<unknown> }>(
    `/pacts/:id/${route.path}`,
    { schema: { body: signedCallSchema(route.action) }, preValidation: signedForThisRoute(route.action) },
    async (request, reply) => {
      const { id } = request.params;
      if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
      const refused = signatureProblem(request.body);
      if (refused) return sendError(reply, refused);
      const built = route.build(request.body, request.headers['x-payment'] as string | undefined);
      if ('error' in built) return sendError(reply, built.error);
      return answer(reply, await send(id, built.command));
    },
  );
}

function registerVerdict(app: FastifyInstance, send: Send, answer: Answer): void {
  app.post<{ Params: Params; Body: VerdictBody }>('/pacts/:id/verdict', { schema: { body: verdictSchema } }, async (request, reply) => {
    const { id } = request.params;
    if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
    const verdict = request.body;
    if (verdict.pactId !== id) return sendError(reply, pactError('invalid_signature', `the verdict is signed for pact "${verdict.pactId}"`));
    if (!verifySignature(verdict.signer, signedPart(verdict), verdict.sig)) {
      return sendError(reply, pactError('invalid_signature', 'the verdict signature does not verify'));
    }
    const problem = sharesProblem(verdict.distribution);
    if (problem) return sendError(reply, pactError('invalid_request', problem, { field: 'distribution' }));
    return answer(reply, await send(id, { type: 'verdict', verdict }));
  });
}

function registerReads(app: FastifyInstance, readModel: ReadModel): void {
  app.get<{ Params: Params }>('/pacts/:id', async (request, reply) => {
    const pact = PACT_ID.test(request.params.id) ? await readModel.get(request.params.id) : undefined;
    return pact ? { pact } : sendError(reply, unknownPact(request.params.id));
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/pacts', { schema: { querystring: listQuery } }, async (request, reply) => {
    const q = request.query;
    const limit = q.limit === undefined ? DEFAULT_LIMIT : Number(q.limit);
    if (limit > MAX_LIMIT) return sendError(reply, pactError('invalid_request', `limit is at most ${MAX_LIMIT}`, { field: 'limit' }));
    return readModel.list({
      party: q.party,
      state: q.state as PactState | undefined,
      groupId: q.groupId,
      since: q.since === undefined ? undefined : Number(q.since),
      limit,
    });
  });
}

const unknownPact = (id: string) => pactError('not_found', `no pact ${id}`);

/** Refuses, before the schema runs, a call signed for another action or pact (see `scopeProblem`). */
function signedForThisRoute(action: PactAction) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const body = request.body;
    if (typeof body !== 'object' || body === null) return; // the schema answers that
    const refused = scopeProblem(body, action, (request.params as Partial<Params>).id ?? '');
    if (refused) return sendError(reply, refused);
  };
}

/** X-PAYMENT carries the proof as JSON or base64-encoded JSON; undefined when it is neither. */
export function parsePaymentHeader(header: string): unknown {
  for (const text of [header, Buffer.from(header, 'base64').toString('utf8')]) {
    try {
      const value: unknown = JSON.parse(text);
      if (typeof value === 'object' && value !== null) return value;
    } catch {
      // try the next form
    }
  }
  return undefined;
}

/**
 * Every party approves a mutual cancel by signing `{ action: "cancel", pactId, stateNonce, expiresAt }`.
 * The submitter's own signed call counts as its approval. A bad approval signature is a 401.
 */
function cancelCommand(body: SignedCall<{ expiresAt: number; sigs: { signer: PartyId; sig: string }[] }>): Built {
  const approval = { action: 'cancel', pactId: body.pactId, stateNonce: body.stateNonce, expiresAt: body.call.expiresAt };
  const forged = body.call.sigs.find((s) => !verifySignature(s.signer, approval, s.sig));
  if (forged) return { error: pactError('invalid_signature', `the cancel approval of ${forged.signer} does not verify`) };
  const approvedBy = [...new Set([body.signer, ...body.call.sigs.map((s) => s.signer)])];
  return {
    command: { type: 'cancel', signer: body.signer, stateNonce: body.stateNonce, expiresAt: body.call.expiresAt, approvedBy },
  };
}
