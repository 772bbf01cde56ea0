import type { FastifyInstance } from 'fastify';
import type { AccessGate } from '../access/gate.js';
import { pactError, type PactError } from '../protocol/errors.js';
import { signedCallSchema } from '../protocol/schemas.js';
import type { SignedCall } from '../protocol/signed-call.js';
import type { Rail } from '../rails/rail.js';
import type { RailAddressBook } from '../rails/address-book.js';
import { sendError } from './errors.js';
import { limitFor, type RateLimits } from './rate-limits.js';
import { signedForThisRoute, unboundCallProblem } from './signed-call.js';

export interface RailRouteDeps {
  rateLimits: RateLimits;
  rails: ReadonlyMap<string, Rail>;
  addressBook: RailAddressBook;
  access: { gate: AccessGate };
}

type BindCall = SignedCall<{ rail?: string; address: string }>;

/**
 * `POST /rails/:rail/address` (`rails.bindAddress`): a party publishes where its payouts on a rail go. First
 * write wins per party and rail: the same address again is 200, another is 409 `address_already_bound`.
 */
export function registerRailRoutes(app: FastifyInstance, { rateLimits, rails, addressBook, access }: RailRouteDeps): void {
  const route = { ...limitFor(rateLimits, 'writes'), schema: { body: signedCallSchema('rails.bindAddress') }, preValidation: signedForThisRoute('rails.bindAddress') };
  app.post<{ Params: { rail: string }; Body: BindCall }>('/rails/:rail/address', route, async (request, reply) => {
    const envelope = request.body;
    const refused = unboundCallProblem(envelope) ?? addressProblem(rails.get(request.params.rail), request.params.rail, envelope.call);
    if (refused) return sendError(reply, refused);
    const closed = await access.gate.problem(envelope.signer).catch(() => pactError('unavailable', 'access could not be read now; retry'));
    if (closed) return sendError(reply, closed);
    const wanted = { rail: request.params.rail, party: envelope.signer, address: envelope.call.address, at: Date.now(), call: envelope };
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

function addressProblem(rail: Rail | undefined, name: string, call: BindCall['call']): PactError | undefined {
  if (!rail) return pactError('rail_not_available', `this server does not offer the ${name} rail`);
  if (call.rail !== undefined && call.rail !== name) return pactError('invalid_signature', `the call is signed for the ${call.rail} rail`);
  if (!rail.isAddress(call.address)) return pactError('invalid_request', `not an address on the ${name} rail`, { field: 'call.address' });
  return undefined;
}
