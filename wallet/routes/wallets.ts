import type { FastifyInstance } from 'fastify';
import type { Wallet } from '../../machines/wallet/types.js';
import type { Clock } from '../../runtime/clock.js';
import { walletOfBearer } from '../auth.js';
import { walletError } from '../errors.js';
import type { IdempotencyStore } from '../idempotency.js';
import { idempotently } from '../idempotent-route.js';
import { internalCaller, type InternalTokens } from '../internal-auth.js';
import { sendWalletError } from '../reply.js';
import { newId, newPairingCode, newPairingToken, normalisedCode, sha256Hex } from '../secrets.js';
import type { TokenIndex } from '../token-index.js';
import { isoTime, usd, walletView } from '../views.js';
import { entryView } from '../ledger.js';
import type { WalletReadModel } from '../read-model.js';
import type { WalletProjector } from '../wallet-projector.js';
import { checkoutView } from './checkout.js';
import type { WalletDesk } from '../wallet-desk.js';

export interface WalletRouteDeps {
  desk: WalletDesk;
  tokens: TokenIndex;
  idempotency: IdempotencyStore;
  clock: Clock;
  /** The base address this service names in the URLs it hands out. */
  baseOf: (host: string | undefined) => string;
  /** Wallets created per minute per IP (0: no limit): each writes to NATS, so nobody may fill it for free. */
  createsPerMinute: number;
  /** Callers with an internal token are not rate limited. */
  internalTokens: InternalTokens;
  /** The ledger pages of `/v1/me`, kept from the journal. */
  readModel: WalletReadModel;
  projector: WalletProjector;
}

/** How long a ledger read waits for the read model to reach what the wallet shows (then it answers as it is). */
const LEDGER_WAIT_MS = 2_000;

/** What the OpenAPI document says of the bearer routes and of Idempotency-Key. */
export const BEARER = [{ bearerAuth: [] }];
export const IDEMPOTENCY_HEADER = {
  type: 'object',
  properties: { 'idempotency-key': { type: 'string', minLength: 1, maxLength: 255, description: "Stripe's semantics: a retry with the same body gets the first response" } },
} as const;

/** A pairing's token and code are good this long. */
export const PAIRING_TTL_MS = 15 * 60_000;

const createBody = {
  type: 'object',
  additionalProperties: false,
  properties: { label: { type: 'string', minLength: 1, maxLength: 100 }, ownerEmail: { type: 'string', format: 'email', maxLength: 254 } },
} as const;

const CHECKOUTS_SHOWN = 20;

/** What the wallet spent (the debits of its settled reservations, what its executions were charged) and holds open. */
function usageOf(wallet: Wallet) {
  const reservations = Object.values(wallet.reservations);
  const executions = Object.values(wallet.executions ?? {});
  const spent =
    reservations.reduce((total, reservation) => total + BigInt(reservation.settlement?.debit ?? '0'), 0n) +
    executions.reduce((total, execution) => total + BigInt(execution.charged), 0n);
  return { totalSpent: usd(spent), executions: executions.length, openReservations: reservations.filter((reservation) => reservation.status === 'held').length };
}

const pageQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: { type: 'string', pattern: '^(100|[1-9][0-9]?)$' }, cursor: { type: 'string', maxLength: 40 } },
} as const;

/** A ledger cursor: opaque to clients, the position of the last entry given. */
const cursorOf = (position: number) => Buffer.from(`v${position}`).toString('base64url');
function cursorVersion(cursor: string): number | undefined {
  const match = /^v([1-9][0-9]{0,14})$/.exec(Buffer.from(cursor, 'base64url').toString());
  return match ? Number(match[1]) : undefined;
}

/** The codes a pairing is claimed with: the token, and the code as a person types it. */
export const pairingCodeHash = (code: string) => sha256Hex(`code:${normalisedCode(code)}`);

/**
 * `POST /v1/wallets` (a zero-balance wallet and its one-time pairing), `GET /v1/wallets/{id}` and `GET /v1/me`
 * (bearer: the wallet's own access token).
 */
export function registerWalletRoutes(app: FastifyInstance, deps: WalletRouteDeps): void {
  const { desk, tokens, idempotency, clock } = deps;
  // Every field is optional, so is the body: none is `{}`.
  const noBodyIsEmpty = async (request: { body: unknown }) => void (request.body ??= {});
  const limit = deps.createsPerMinute > 0 ? { config: { rateLimit: { max: deps.createsPerMinute, timeWindow: '1 minute', allowList: internalCaller(deps.internalTokens) } } } : {};
  app.post<{ Body: { label?: string; ownerEmail?: string } | undefined }>('/v1/wallets', { ...limit, preValidation: noBodyIsEmpty, schema: { operationId: 'createWallet', body: createBody, headers: IDEMPOTENCY_HEADER } }, (request, reply) =>
    idempotently(idempotency, `ip:${request.ip}`, request, reply, async () => {
      const now = clock.now();
      const [token, code] = [newPairingToken(), newPairingCode()];
      const wallet: Wallet = {
        id: newId('w'),
        status: 'pending_pairing',
        label: request.body?.label ?? null,
        ownerEmail: request.body?.ownerEmail ?? null,
        balance: '0',
        held: '0',
        pairing: { id: newId('pr'), expiresAt: now + PAIRING_TTL_MS, claimedAt: null },
        accessTokenHash: null,
        checkouts: {},
        reservations: {},
        creditsReceived: {},
        createdAt: now,
        updatedAt: now,
        version: 1,
      };
      await tokens.add({ tokenHash: sha256Hex(token), walletId: wallet.id, kind: 'pairing' });
      await tokens.add({ tokenHash: pairingCodeHash(code), walletId: wallet.id, kind: 'pairing_code' });
      await desk.create(wallet);
      const claimUrl = `${deps.baseOf(request.headers.host)}/v1/pairings/claim`;
      const pairing = { id: wallet.pairing.id, token, code, expiresAt: isoTime(wallet.pairing.expiresAt), claimUrl };
      return { status: 201, body: { wallet: walletView(wallet), pairing } };
    }),
  );

  app.get<{ Params: { id: string } }>('/v1/wallets/:id', { schema: { operationId: 'getWallet', security: BEARER } }, async (request, reply) => {
    const opened = await walletOfBearer(request, tokens, desk);
    if ('error' in opened) return sendWalletError(reply, opened.error);
    if (opened.wallet.id !== request.params.id) return sendWalletError(reply, walletError('forbidden', 'this token opens another wallet'));
    return { wallet: walletView(opened.wallet) };
  });

  app.get<{ Querystring: { limit?: string; cursor?: string } }>('/v1/me', { schema: { operationId: 'getWalletOverview', security: BEARER, querystring: pageQuery } }, async (request, reply) => {
    const opened = await walletOfBearer(request, tokens, desk);
    if ('error' in opened) return sendWalletError(reply, opened.error);
    const { wallet } = opened;
    const limit = request.query.limit === undefined ? 20 : Number(request.query.limit);
    const before = request.query.cursor === undefined ? Infinity : cursorVersion(request.query.cursor);
    if (before === undefined) return sendWalletError(reply, walletError('invalid_request', 'cursor is not one this service gave', { field: 'cursor' }));
    await deps.projector.reached(desk.knownPosition(wallet.id), LEDGER_WAIT_MS); // what this wallet's reader just saw
    const entries = await deps.readModel.ledgerPage(wallet.id, before, limit);
    const page = entries.slice(0, limit);
    const completed = Object.values(wallet.checkouts).filter((checkout) => checkout.completedAt !== null);
    const base = deps.baseOf(request.headers.host);
    return {
      wallet: walletView(wallet),
      funding: {
        totalFunded: usd(completed.reduce((sum, checkout) => sum + BigInt(checkout.amount), 0n)),
        lastFundedAt: completed.length === 0 ? null : isoTime(Math.max(...completed.map((checkout) => checkout.completedAt!))),
        // The latest ones; every top-up stays in the ledger.
        checkouts: Object.values(wallet.checkouts).reverse().slice(0, CHECKOUTS_SHOWN).map((checkout) => checkoutView(checkout, wallet.id, base, clock.now())),
      },
      usage: usageOf(wallet),
      ledger: { items: page.map(({ entry }) => entryView(entry)), nextCursor: entries.length > limit ? cursorOf(page.at(-1)!.position) : null },
    };
  });
}
