import type { AccessStatus, AccessMode } from '../machines/access/types.js';
import { pactError, type PactError } from '../protocol/errors.js';

/**
 * The one rule for every signed write (escrow-service.md, Authentication 6): on an invite-mode server, a
 * signer that is not allowed is refused with 403 `access_required`, and told how to ask. Checked where each
 * write's signature is verified (the actor host for pact commands from HTTP and NATS, the offer desk, the
 * event and blob upload routes), after that signature and before anything else the write does.
 * `access.request`, `access.verify`, pokes, verdicts and the pinned evaluator's uploads do not pass it, nor
 * the ways out (`isGated`).
 */
export interface AccessGate {
  readonly mode: AccessMode;
  problem(signer: string): Promise<PactError | undefined>;
}

/**
 * The ways out of a pact a party already holds money in (withdraw, mutual cancel) stay open to it whatever
 * its access (a revoked party's deposit is never locked in): the one exception beyond the spec's.
 */
const WAYS_OUT: readonly string[] = ['pacts.withdraw', 'pacts.cancel'];

/** Whether a signed call of `action` passes the gate. */
export const isGated = (action: unknown): boolean => typeof action !== 'string' || !WAYS_OUT.includes(action);

/** Anyone may write. */
export const openGate: AccessGate = { mode: 'open', problem: async () => undefined };

/** Only parties whose status `statusOf` says is allowed may write. */
export function inviteGate(statusOf: (party: string) => Promise<AccessStatus>): AccessGate {
  return {
    mode: 'invite',
    async problem(signer) {
      let status: AccessStatus;
      try {
        status = await statusOf(signer);
      } catch (error) {
        console.error('access could not be read:', String(error));
        return pactError('unavailable', 'access could not be checked now; retry');
      }
      return status === 'allowed' ? undefined : accessRequired(signer, status);
    },
  };
}

function accessRequired(party: string, status: AccessStatus): PactError {
  return pactError('access_required', 'this server is invite-only: ask for access with an email address, then verify the code mailed to it', {
    status,
    request: {
      route: 'POST /access/request',
      action: 'access.request',
      call: { email: 'an address you read', useCase: 'optional: what you will use the server for' },
      then: { route: 'POST /access/verify', action: 'access.verify', call: { otp: 'the six digits mailed to you, within ten minutes' } },
      status: `GET /access/${party}`,
      signedBy: party,
      pactId: '',
      stateNonce: 0,
    },
  });
}
