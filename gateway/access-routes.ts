import type { FastifyInstance } from 'fastify';
import type { AccessDesk } from '../access/desk.js';
import type { AccessGate } from '../access/gate.js';
import { adminCallProblem, normalEmail } from '../machines/access/rules.js';
import type { AdminCall } from '../machines/access/types.js';
import { canonicalHashHex } from '../protocol/digest.js';
import { pactError, type PactError } from '../protocol/errors.js';
import { isPartyId } from '../protocol/party.js';
import { signedCallSchema, type AccessAction } from '../protocol/schemas.js';
import { signedPart, type SignedCall } from '../protocol/signed-call.js';
import type { Clock } from '../runtime/clock.js';
import { sendError } from './errors.js';
import { limitFor, type RateLimits } from './rate-limits.js';
import { signedForThisRoute, unboundCallProblem } from './signed-call.js';
import { clientOf, TokenBuckets } from './token-buckets.js';

export interface AccessRouteDeps {
  rateLimits: RateLimits;
  clock: Clock;
  access: { desk: AccessDesk; gate: AccessGate; adminParty?: string; requestsPerIpPerHour: number };
}

const HOUR_MS = 3_600_000;
/** Codes mailed per address an hour (per client IP: PACT_RATE_LIMIT_ACCESS, and three times as many checks). */
const REQUESTS_PER_EMAIL = 5;

/** The access routes (escrow-service.md, Access; DECISIONS.md, Access). Rules are the desk's and machines/access. */
export function registerAccessRoutes(app: FastifyInstance, deps: AccessRouteDeps): void {
  const { desk, gate, adminParty, requestsPerIpPerHour } = deps.access;
  const writes = limitFor(deps.rateLimits, 'writes');
  const perIp = requestsPerIpPerHour > 0 ? new TokenBuckets(requestsPerIpPerHour, HOUR_MS) : undefined;
  const perEmail = new TokenBuckets(REQUESTS_PER_EMAIL, HOUR_MS);
  const verifiesPerIp = requestsPerIpPerHour > 0 ? new TokenBuckets(3 * requestsPerIpPerHour, HOUR_MS) : undefined;
  const open = gate.mode === 'open';
  const signedRoute = (action: AccessAction) => ({ ...writes, schema: { body: signedCallSchema(action) }, preValidation: signedForThisRoute(action) });

  app.post<{ Body: SignedCall<{ email: string; useCase?: string }> }>('/access/request', signedRoute('access.request'), async (request, reply) => {
    const now = deps.clock.now();
    const refused = unboundCallProblem(request.body);
    if (refused) return sendError(reply, refused);
    if (open) return { mode: 'open', status: 'allowed', sent: false };
    const email = normalEmail(request.body.call.email);
    if (!email) return sendError(reply, pactError('invalid_request', 'call.email is not an email address', { field: 'call.email' }));
    const limited = limit(perIp, clientOf(request.ip), now) ?? limit(perEmail, email, now);
    if (limited) return sendError(reply, limited);
    const sent = await guarded(desk.request(request.body.signer, email, request.body.call.useCase || undefined, now));
    return sent.ok ? { mode: gate.mode, sent: true, expiresAt: sent.expiresAt } : sendError(reply, sent.error);
  });

  app.post<{ Body: SignedCall<{ otp: string }> }>('/access/verify', signedRoute('access.verify'), async (request, reply) => {
    const now = deps.clock.now();
    const refused = unboundCallProblem(request.body) ?? limit(verifiesPerIp, clientOf(request.ip), now);
    if (refused) return sendError(reply, refused);
    if (open) return { mode: 'open', party: request.body.signer, status: 'allowed' };
    const verified = await guarded(desk.verify(request.body.signer, request.body.call.otp, now));
    return verified.ok ? { mode: gate.mode, party: request.body.signer, status: verified.status } : sendError(reply, verified.error);
  });

  app.get<{ Params: { party: string } }>('/access/:party', async (request, reply) => {
    const { party } = request.params;
    if (!isPartyId(party)) return sendError(reply, pactError('invalid_request', 'not a party id (ed25519:…)', { field: 'party' }));
    if (open) return { mode: 'open', status: 'allowed' };
    const view = await guarded(desk.view(party).then((found) => ({ ok: true as const, ...found })));
    return view.ok ? { mode: gate.mode, status: view.status } : sendError(reply, view.error);
  });

  app.post<{ Body: SignedCall<AdminCall> }>('/access/admin', signedRoute('access.admin'), async (request, reply) => {
    const now = deps.clock.now();
    const refused = unboundCallProblem(request.body);
    if (refused) return sendError(reply, refused);
    if (adminParty === undefined || request.body.signer !== adminParty) return sendError(reply, pactError('forbidden', 'only the operator (PACT_ADMIN_PARTY) signs access.admin'));
    const malformed = adminCallProblem(request.body.call, isPartyId);
    if (malformed) return sendError(reply, malformed);
    const done = await guarded(desk.admin(request.body.call, canonicalHashHex(signedPart(request.body)), now));
    if (!done.ok) return sendError(reply, done.error);
    const { ok: _ok, ...answer } = done;
    return { mode: gate.mode, ...answer };
  });
}

/** The desk's outcome, or 503 when the access journal could not be read or written. */
async function guarded<T extends { ok: boolean }>(outcome: Promise<T>): Promise<T | { ok: false; error: PactError }> {
  try {
    return await outcome;
  } catch (error) {
    console.error('access journal failed:', String(error));
    return { ok: false, error: pactError('unavailable', 'access could not be read or written now; retry') };
  }
}

function limit(buckets: TokenBuckets | undefined, key: string, now: number): PactError | undefined {
  const limited = buckets?.take(key, 1, now);
  return limited && pactError('rate_limited', 'too many access requests; retry later', limited);
}
