import { RailError } from '../rail.js';

const TIMEOUT_MS = 10_000;
const RESERVATIONS = '/v1/internal/agent-pact/reservations';

type Usd = { amount: string; asset: 'USD' };

/** What the credit rail asks the wallet service to hold: the body of a reservation (WALLET-DECISIONS.md). */
export interface ReserveBody {
  walletId: string;
  amount: Usd;
  activity: { kind: 'pact'; pactId: string; party: string; role: string };
  expiresAt: string;
  memo: string;
}

export interface SettleBody {
  activityState: 'SETTLED' | 'CANCELLED';
  debit: Usd;
  credits: { walletId: string; amount: Usd }[];
  reference: string;
}

/** The part of a reservation the rail reads. */
export interface HeldReservation {
  id: string;
  walletId: string;
  status: 'held' | 'settled' | 'released' | 'expired';
  amount: Usd;
}

/** Where the wallet service is and the token of its internal routes. */
export interface WalletEndpoint {
  url: () => string;
  internalToken: string;
}

/**
 * The credit rail's side of the wallet service: its internal agent-pact reservation routes (behind the internal
 * token), and whether a wallet bearer opens a wallet (its public `GET /v1/wallets/{id}`). Every refusal that
 * is the payer's becomes the RailError a rail throws; anything else is `rail_failure` (retry).
 */
export class WalletClient {
  constructor(private readonly endpoint: WalletEndpoint) {}

  /** Whether `bearer` opens wallet `walletId`; throws when the wallet service cannot say. */
  async opens(walletId: string, bearer: string): Promise<boolean> {
    const response = await this.call('GET', `/v1/wallets/${encodeURIComponent(walletId)}`, undefined, { authorization: `Bearer ${bearer}` });
    if (response.ok) return true;
    if ([401, 403, 404].includes(response.status)) return false;
    throw new RailError('rail_failure', `the wallet service answered ${response.status}`);
  }

  /** Holds `body.amount` on the wallet, once per `key`: a repeat answers the same reservation. */
  async reserve(body: ReserveBody, key: string): Promise<HeldReservation> {
    const response = await this.call('POST', RESERVATIONS, body, { 'idempotency-key': key }, true);
    const answer = await response.json().catch(() => undefined);
    if (response.status === 201 || response.status === 200) return (answer as { reservation: HeldReservation }).reservation;
    const code = (answer as { error?: string } | undefined)?.error;
    if (code === 'insufficient_credit') throw new RailError('insufficient_funds', `wallet ${body.walletId} has ${(answer as { available?: Usd }).available?.amount ?? 'less'} available`);
    if (code === 'wallet_suspended' || code === 'forbidden') throw new RailError('wrong_payer', `wallet ${body.walletId} cannot pay: ${code}`);
    throw new RailError('rail_failure', `reserving on ${body.walletId}: the wallet service answered ${response.status} ${code ?? ''}`.trim());
  }

  /** Settles a held reservation, exactly once: a repeat of the same settlement answers the stored one. */
  settle(reservationId: string, body: SettleBody): Promise<HeldReservation> {
    return this.finish(`${RESERVATIONS}/${reservationId}/settle`, body, 'settled');
  }

  /** Releases a held reservation whole, exactly once. */
  release(reservationId: string, reason: string): Promise<HeldReservation> {
    return this.finish(`${RESERVATIONS}/${reservationId}/release`, { reason }, 'released');
  }

  /** Whether the wallet service answers at all. */
  async live(): Promise<boolean> {
    return this.call('GET', '/openapi.json').then((response) => response.ok, () => false);
  }

  private async finish(path: string, body: unknown, wanted: HeldReservation['status']): Promise<HeldReservation> {
    const response = await this.call('POST', path, body, {}, true);
    const answer = (await response.json().catch(() => undefined)) as { reservation?: HeldReservation; error?: string } | undefined;
    if (response.ok && answer?.reservation?.status === wanted) return answer.reservation;
    throw new RailError('rail_failure', `${path}: the wallet service answered ${response.status} ${answer?.error ?? ''}`.trim());
  }

  private async call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, internal = false): Promise<Response> {
    try {
      return await fetch(`${this.endpoint.url()}${path}`, {
        method,
        headers: {
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(internal ? { authorization: `Bearer ${this.endpoint.internalToken}` } : {}),
          ...headers,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new RailError('rail_failure', `the wallet service could not be reached: ${String(error)}`);
    }
  }
}
