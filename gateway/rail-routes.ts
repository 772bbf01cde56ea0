import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AccessGate } from '../access/gate.js';
import { pactError, type PactError } from '../protocol/errors.js';
import { signedCallSchema } from '../protocol/schemas.js';
import type { SignedCall } from '../protocol/signed-call.js';
import type { Rail } from '../rails/rail.js';
import type { RailAddressBook } from '../rails/address-book.js';
import type { Clock } from '../runtime/clock.js';
import { sendError } from './errors.js';
import { limitFor, type RateLimits } from './rate-limits.js';
import { signedForThisRoute, unboundCallProblem } from './signed-call.js';
import { walletConsentProblem, type WalletOpener } from './credit-consent.js';

export interface RailRouteDeps {
  rateLimits: RateLimits;
  clock: Clock;
  rails: ReadonlyMap<string, Rail>;
  addressBook: RailAddressBook;
  access: { gate: AccessGate };
  creditWallets: WalletOpener | undefined;
}

type BindCall = SignedCall<{ rail?: string; address: string }>;

/**
 * `POST /rails/:rail/address` (`rails.bindAddress`): a party publishes where its payouts on a rail go. First
 * write wins per party and rail: the same address again is 200, another is 409 `address_already_bound`. A
 * wallet is bound on the credit rail only by whoever holds its bearer.
 */
export function registerRailRoutes(app: FastifyInstance, { rateLimits, clock, rails, addressBook, access, creditWallets }: RailRouteDeps): void {
  const route = { ...limitFor(rateLimits, 'writes'), schema: { body: signedCallSchema('rails.bindAddress') }, preValidation: [signedForThisRoute('rails.bindAddress'), signedForThisRail] };
  app.post<{ Params: { rail: string }; Body: BindCall }>('/rails/:rail/address', route, async (request, reply) => {
    const envelope = request.body;
    const refused = unboundCallProblem(envelope);
    if (refused) return sendError(reply, refused);
    const closed = await access.gate.problem(envelope.signer).catch(() => pactError('unavailable', 'access could not be read now; retry'));
    if (closed) return sendError(reply, closed);
    const unfit = addressProblem(rails.get(request.params.rail), request.params.rail, envelope.call.address);
    if (unfit) return sendError(reply, unfit);
    const unproved = request.params.rail === 'credit' ? await walletConsentProblem(creditWallets, envelope.call.address, request.headers.authorization) : undefined;
    if (unproved) return sendError(reply, unproved);
    const wanted = { rail: request.params.rail, party: envelope.signer, address: envelope.call.address, at: clock.now(), call: envelope };
    let binding;
    try {
      binding = await addressBook.bind(wanted);
    } catch (error) {
      console.error('binding a rail address failed:', String(error));
      return sendError(reply, pactError('unavailable', 'the address could not be recorded now; retry'));
    }
    if ('conflict' in binding) {
      return sendError(reply, pactError('address_already_bound', `${envelope.signer} bound another address on ${wanted.rail} first`, { address: binding.conflict.address }));
    }
    const { rail, party, address, at } = binding.bound;
    return { rail, party, address, boundAt: at };
  });
}

/**
 * A call that names its rail binds there only: one signed for another rail is 401, like one signed for another
 * route. (The spec lets `call.rail` be absent; such a call could be replayed to another rail for ten minutes,
 * which is why the SDK always signs it.)
 */
async function signedForThisRail(request: FastifyRequest, reply: FastifyReply) {
  const rail = (request.body as { call?: { rail?: unknown } } | null)?.call?.rail;
  const url = (request.params as { rail: string }).rail;
  if (typeof rail === 'string' && rail !== url) return sendError(reply, pactError('invalid_signature', `the call is signed for the ${rail} rail`));
}

function addressProblem(rail: Rail | undefined, name: string, address: string): PactError | undefined {
  if (!rail) return pactError('rail_not_available', `this server does not offer the ${name} rail`);
  if (!rail.isAddress(address)) return pactError('invalid_request', `not an address on the ${name} rail`, { field: 'call.address' });
  return undefined;
}
