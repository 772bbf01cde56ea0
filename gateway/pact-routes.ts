import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createdPactId, oversizeProblem } from '../actors/admission.js';
import type { CommandSender } from '../actors/command-sender.js';
import type { PactBlobs } from '../blobs/pact-blobs.js';
import type { CommandReply, HostCommand } from '../actors/messages.js';
import type { PactSpec } from '../machines/pact/spec.js';
import type { PactState, Proposal, VerdictBody } from '../machines/pact/types.js';
import { pactError } from '../protocol/errors.js';
import { signedPart, type SignedCall } from '../protocol/signed-call.js';
import { verifySignature } from '../protocol/verify.js';
import type { Projector } from '../projection/projector.js';
import type { ReadModel } from '../projection/read-model.js';
import { PACT_ID } from '../protocol/ids.js';
import { answerWith, JSON_TYPE, type Answer } from './answer.js';
import { badSignature, sendError, unknownPact } from './errors.js';
import { limitFor, type RateLimits } from './rate-limits.js';
import { listQuery, signedCallSchema, verdictSchema, type PactAction } from '../protocol/schemas.js';
import { signedForThisRoute } from './signed-call.js';
import { creditFundConsent, type WalletOpener } from './credit-consent.js';
import { paymentOf } from './payment-header.js';

export interface PactRouteDeps {
  rateLimits: RateLimits;
  bus: CommandSender;
  readModel: ReadModel;
  projector: Projector;
  blobs: { uploads: PactBlobs };
  /** The wallet service that says whether a bearer opens a wallet (the credit rail); absent, no credit rail. */
  creditWallets: WalletOpener | undefined;
}

const DEFAULT_LIMIT = 50;
const MAX_LIMIT = 200;
const LIST_WAIT_MS = 1_000;

type Params = { id: string };

/** The signed routes of one pact: each takes a SignedCall of its action, which the actor host verifies. */
const SIGNED_ROUTES: { path: string; action: PactAction }[] = [
  { path: 'fund', action: 'pacts.fund' },
  { path: 'withdraw', action: 'pacts.withdraw' },
  { path: 'propose', action: 'pacts.propose' },
  { path: 'cosign', action: 'pacts.cosign' },
  { path: 'object', action: 'pacts.object' },
  { path: 'cancel', action: 'pacts.cancel' },
];

type Send = (pactId: string, command: HostCommand) => Promise<CommandReply>;

/**
 * The gateway checks only what needs no pact and no key: the body's shape and that the call names this
 * route. Signatures, and every rule after them, are the actor host's.
 */
export function registerPactRoutes(app: FastifyInstance, deps: PactRouteDeps): void {
  const send: Send = (pactId, command) => deps.bus.send(pactId, command);
  const answer = answerWith(deps.projector);
  const writes = limitFor(deps.rateLimits, 'writes');
  app.post<{ Body: SignedCall<PactSpec> }>(
    '/pacts',
    { ...writes, schema: { body: signedCallSchema('pacts.create') }, preValidation: signedForThisRoute('pacts.create'), preHandler: storable },
    async (request, reply) => answer(reply, await send(createdPactId(request.body), { type: 'signed', envelope: request.body })),
  );
  const checks: Partial<Record<PactAction, PreHandler>> = { 'pacts.propose': blobsUploaded(deps.blobs.uploads), 'pacts.fund': creditFundConsent(deps.creditWallets) };
  for (const route of SIGNED_ROUTES) registerSignedRoute(app, route, writes, send, answer, checks[route.action]);
  app.post<{ Params: Params; Body: VerdictBody }>('/pacts/:id/verdict', { ...writes, schema: { body: verdictSchema } }, async (request, reply) => {
    const { id } = request.params;
    if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
    return answer(reply, await send(id, { type: 'verdict', verdict: request.body }));
  });
  app.post<{ Params: Params }>('/pacts/:id/poke', limitFor(deps.rateLimits, 'pokes'), async (request, reply) => {
    const { id } = request.params;
    if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
    return answer(reply, await send(id, { type: 'poke' }));
  });
  registerReads(app, deps, limitFor(deps.rateLimits, 'lists'));
}

type Limit = ReturnType<typeof limitFor>;

type PreHandler = (request: FastifyRequest<{ Params: Params; Body: SignedCall<any> }>, reply: FastifyReply) => Promise<unknown>;

function registerSignedRoute(app: FastifyInstance, route: { path: string; action: PactAction }, limit: Limit, send: Send, answer: Answer, check?: PreHandler): void {
  app.post<{ Params: Params; Body: SignedCall<unknown> }>(
    `/pacts/:id/${route.path}`,
    { ...limit, schema: { body: signedCallSchema(route.action) }, preValidation: signedForThisRoute(route.action), preHandler: check ? [storable, check] : storable },
    async (request, reply) => {
      const { id } = request.params;
      if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
      const payment = paymentOf(request.headers);
      const command: HostCommand = { type: 'signed', envelope: request.body, ...(payment !== undefined ? { payment } : {}) };
      return answer(reply, await send(id, command));
    },
  );
}

function registerReads(app: FastifyInstance, { readModel, projector }: PactRouteDeps, listLimit: Limit): void {
  // Not async: a cached body is sent in the same turn, with no promise in between (reads are the hot path).
  app.get<{ Params: Params }>('/pacts/:id', (request, reply) => {
    const { id } = request.params;
    if (!PACT_ID.test(id)) return sendError(reply, unknownPact(id));
    const cached = readModel.cachedResponse(id);
    if (cached) return reply.type(JSON_TYPE).send(cached);
    return readModel.response(id).then((body) => (body ? reply.type(JSON_TYPE).send(body) : sendError(reply, unknownPact(id))));
  });

  app.get<{ Querystring: Record<string, string | undefined> }>('/pacts', { ...listLimit, schema: { querystring: listQuery } }, async (request, reply) => {
    const q = request.query;
    const limit = q.limit === undefined ? DEFAULT_LIMIT : Number(q.limit);
    if (limit > MAX_LIMIT) return sendError(reply, pactError('invalid_request', `limit is at most ${MAX_LIMIT}`, { field: 'limit' }));
    await projector.allWritten(LIST_WAIT_MS); // the indexes then hold every write this node has answered
    return readModel.list({
      party: q.party,
      state: q.state as PactState | undefined,
      groupId: q.groupId,
      since: q.since === undefined ? undefined : Number(q.since),
      limit,
    });
  });
}

/**
 * After the schema: a call larger than the pact may keep is 413, before any signature is checked. (The body
 * parser has refused what cannot be signed.)
 */
async function storable(request: FastifyRequest<{ Body: SignedCall<unknown> }>, reply: FastifyReply) {
  const refused = oversizeProblem(request.body.action, request.body.call);
  if (refused) return sendError(reply, refused);
}

/**
 * A proposal names only blobs uploaded to its pact (400 `unknown_blob`). The gateway checks it, where the
 * uploads are known; a proposal naming blobs has its signature checked here first (the host checks it
 * again), so that no one learns from a forged call which blobs a pact holds.
 */
function blobsUploaded(uploads: PactBlobs): PreHandler {
  return async (request: FastifyRequest<{ Params: Params; Body: SignedCall<Proposal> }>, reply) => {
    const evidence = request.body.call.evidence;
    if (!evidence.some((item) => 'blob' in item)) return;
    const { sig, signer } = request.body;
    if (!verifySignature(signer, signedPart(request.body), sig)) return sendError(reply, badSignature());
    for (const [index, item] of evidence.entries()) {
      if (!('blob' in item) || (await uploads.has(request.params.id, item.blob))) continue;
      return sendError(reply, pactError('unknown_blob', `blob ${item.blob} was not uploaded to this pact`, { field: `call.evidence.${index}.blob` }));
    }
  };
}
