import { createHash } from 'node:crypto';
import bs58 from 'bs58';
import type { FastifyInstance, FastifyReply } from 'fastify';
import type { WalletEvent } from '../../machines/wallet/events.js';
import type { Reservation, Settlement, Wallet } from '../../machines/wallet/types.js';
import type { Clock } from '../../runtime/clock.js';
import { walletError, type WalletError } from '../errors.js';
import { internalOnly, type InternalTokens } from '../internal-auth.js';
import { expiryOf, holdOf, releaseOf, settlementOf } from '../ledger.js';
import { creditPayee } from '../payee-credits.js';
import { sendWalletError } from '../reply.js';
import { jcs } from '../../protocol/jcs.js';
import { sha256Hex, WALLET_ID } from '../secrets.js';
import { ownedKey, ownerOf, TokenTaken } from '../token-index.js';
import type { TokenIndex } from '../token-index.js';
import { isoTime, usd, walletView } from '../views.js';
import type { WalletDesk } from '../wallet-desk.js';

export interface ReservationRouteDeps {
  desk: WalletDesk;
  tokens: TokenIndex;
  clock: Clock;
  /** Who may call the internal routes (WALLET_INTERNAL_TOKEN unset: 503 to all but this process's credit rail). */
  internalTokens: InternalTokens;
  /** How long a reservation holds when its request names no `expiresAt`. */
  reservationTtlMs: number;
}

const PATH = '/v1/internal/agent-pact/reservations';
const money = {
  type: 'object',
  required: ['amount', 'asset'],
  additionalProperties: false,
  properties: { amount: { type: 'string', pattern: '^(0|[1-9][0-9]{0,29})$' }, asset: { const: 'USD' } },
} as const;
const text = (max: number) => ({ type: 'string', minLength: 1, maxLength: max }) as const;
const walletIdSchema = { type: 'string', pattern: WALLET_ID.source } as const;
const reserveBody = {
  type: 'object',
  required: ['walletId', 'amount', 'activity'],
  additionalProperties: false,
  properties: {
    walletId: walletIdSchema,
    amount: money,
    activity: {
      type: 'object',
      required: ['kind', 'pactId', 'party', 'role'],
      additionalProperties: false,
      properties: { kind: { const: 'pact' }, pactId: text(128), party: text(128), role: text(64) },
    },
    expiresAt: { type: 'string', format: 'date-time' },
    memo: text(500),
  },
} as const;
const settleBody = {
  type: 'object',
  required: ['activityState', 'debit', 'credits', 'reference'],
  additionalProperties: false,
  properties: {
    activityState: { enum: ['SETTLED', 'CANCELLED'] },
    debit: money,
    credits: { type: 'array', maxItems: 100, items: { type: 'object', required: ['walletId', 'amount'], additionalProperties: false, properties: { walletId: walletIdSchema, amount: money } } },
    reference: text(256),
  },
} as const;
const releaseBody = { type: 'object', additionalProperties: false, properties: { reason: text(500) } } as const;

type Money = { amount: string; asset: 'USD' };
type ReserveBody = { walletId: string; amount: Money; activity: Reservation['activity']; expiresAt?: string; memo?: string };
type SettleBody = { activityState: Settlement['activityState']; debit: Money; credits: { walletId: string; amount: Money }[]; reference: string };

/** What a decision answers when the request repeats one already applied: nothing is recorded, the stored result is the answer. */
const REPLAY: WalletError = walletError('invalid_request', 'a repeat of what was applied');

/** A reservation's id, from what makes a request the same one: its Idempotency-Key, else the pact and party. */
function reservationIdOf(walletId: string, idempotencyKey: string | undefined, activity: Reservation['activity']): string {
  const key = idempotencyKey !== undefined ? `idempotency:${idempotencyKey}` : `pact:${activity.pactId}:${activity.party}`;
  return `rsv_${bs58.encode(createHash('sha256').update(`${walletId}\n${key}`).digest()).slice(0, 24)}`;
}

/** A reservation as the routes answer it; a hold past `expiresAt` reads `expired` (it can only be released now). */
export function reservationView(wallet: Wallet, reservation: Reservation, now: number) {
  const settled = reservation.settlement?.debit ?? '0';
  const given = { held: '0', released: reservation.amount, expired: reservation.amount, settled: (BigInt(reservation.amount) - BigInt(settled)).toString() };
  const released = given[reservation.status];
  const { balance, held, available, status } = walletView(wallet);
  return {
    id: reservation.id,
    walletId: wallet.id,
    status: reservation.status === 'held' && now >= reservation.expiresAt ? 'expired' : reservation.status,
    amount: usd(reservation.amount),
    settled: usd(settled),
    released: usd(released),
    activity: { ...reservation.activity, state: reservation.settlement?.activityState ?? null },
    wallet: { balance, held, available, status },
    memo: reservation.memo,
    createdAt: isoTime(reservation.createdAt),
    expiresAt: isoTime(reservation.expiresAt),
    finalizedAt: reservation.finalizedAt === null ? null : isoTime(reservation.finalizedAt),
    ledgerTxIds: reservation.ledgerTxIds,
  };
}

/**
 * The internal agent-pact reservations (WALLET-DECISIONS.md): reserve idempotently (402 `insufficient_credit`),
 * read, settle a terminal activity exactly once (debit ≤ reserved, credits to other wallets, the rest back),
 * release exactly once. Behind WALLET_INTERNAL_TOKEN.
 */
export function registerReservationRoutes(app: FastifyInstance, deps: ReservationRouteDeps): void {
  const { desk, tokens } = deps;
  const guard = internalOnly(deps.internalTokens);

  app.post<{ Body: ReserveBody }>(PATH, { onRequest: guard, schema: { operationId: 'reserveAgentPactCredits', body: reserveBody } }, async (request, reply) => {
    const body = request.body;
    const idempotencyKey = request.headers['idempotency-key'];
    if (idempotencyKey !== undefined && (typeof idempotencyKey !== 'string' || idempotencyKey.length === 0 || idempotencyKey.length > 255)) {
      return sendWalletError(reply, walletError('invalid_request', 'Idempotency-Key is 1 to 255 characters', { field: 'Idempotency-Key' }));
    }
    const amount = BigInt(body.amount.amount);
    if (amount === 0n) return sendWalletError(reply, walletError('invalid_request', 'a reservation holds more than 0', { field: 'amount' }));
    const expiresAt = body.expiresAt === undefined ? undefined : Date.parse(body.expiresAt);
    // JSON Schema's date-time takes what Date cannot read (a leap second, year 275760 and beyond): refused here.
    if (expiresAt !== undefined && !Number.isSafeInteger(expiresAt)) return sendWalletError(reply, walletError('invalid_request', 'expiresAt is not a time this service can hold', { field: 'expiresAt' }));
    const id = reservationIdOf(body.walletId, idempotencyKey, body.activity);
    const bodyHash = sha256Hex(jcs(body));
    let replay: Reservation | undefined;
    const outcome = await desk.change(body.walletId, (wallet, now): WalletEvent | WalletError => {
      const earlier = wallet.reservations[id];
      if (earlier) {
        if (earlier.bodyHash !== bodyHash) return walletError('idempotency_key_reused', 'this reservation was asked for with another body');
        replay = earlier;
        return REPLAY; // answered below, nothing recorded
      }
      if (wallet.status === 'suspended') return walletError('wallet_suspended', 'this wallet is suspended');
      if (wallet.status !== 'active') return walletError('forbidden', `a ${wallet.status} wallet reserves nothing`);
      const free = BigInt(wallet.balance) - BigInt(wallet.held);
      if (amount > free) return walletError('insufficient_credit', 'the wallet does not have that much available', { requested: usd(amount), available: usd(free) });
      if (expiresAt !== undefined && expiresAt <= now) return walletError('invalid_request', 'expiresAt is in the past', { field: 'expiresAt' });
      const reservation: Reservation = {
        id,
        amount: amount.toString(),
        status: 'held',
        activity: body.activity,
        memo: body.memo ?? null,
        bodyHash,
        createdAt: now,
        expiresAt: expiresAt ?? now + deps.reservationTtlMs,
        finalizedAt: null,
        settlement: null,
        releaseReason: null,
        ledgerTxIds: [],
      };
      return { type: 'reserved', at: now, reservation, ...holdOf(wallet, reservation, now) };
    });
    if ('error' in outcome && !replay) return sendWalletError(reply, outcome.error);
    // Indexed once it exists (a replay indexes it if a crash came between): GET, settle and release find it by id.
    await indexed(tokens, id, body.walletId);
    if (replay) return answer(reply, 200, (await desk.read(body.walletId))!, id, deps.clock.now());
    return answer(reply, 201, (outcome as { wallet: Wallet }).wallet, id, deps.clock.now());
  });

  app.get<{ Params: { id: string } }>(`${PATH}/:id`, { onRequest: guard, schema: { operationId: 'getAgentPactReservation' } }, async (request, reply) => {
    const found = await reservationOf(deps, request.params.id);
    if (!found) return sendWalletError(reply, walletError('not_found', `no reservation ${request.params.id}`));
    return answer(reply, 200, found.wallet, found.reservation.id, deps.clock.now());
  });

  app.post<{ Params: { id: string }; Body: SettleBody }>(`${PATH}/:id/settle`, { onRequest: guard, schema: { operationId: 'settleAgentPactCredits', body: settleBody } }, async (request, reply) => {
    const found = await reservationOf(deps, request.params.id);
    if (!found) return sendWalletError(reply, walletError('not_found', `no reservation ${request.params.id}`));
    const body = request.body;
    const settlement: Settlement = {
      activityState: body.activityState,
      debit: body.debit.amount,
      credits: body.credits.map((credit) => ({ walletId: credit.walletId, amount: credit.amount.amount })),
      reference: body.reference,
      bodyHash: sha256Hex(jcs(body)),
    };
    const problem = settlementProblem(found.wallet.id, found.reservation, settlement);
    if (problem) return sendWalletError(reply, problem);
    const now = deps.clock.now();
    const replayed = found.reservation.status === 'settled' && found.reservation.settlement?.bodyHash === settlement.bodyHash;
    if (!replayed && (found.reservation.status !== 'held' || now >= found.reservation.expiresAt)) return sendWalletError(reply, notHeld(found.wallet, found.reservation, now));
    if (found.reservation.status === 'held') {
      for (const credit of settlement.credits) {
        const payee = await desk.read(credit.walletId);
        if (!payee || payee.status === 'closed') return sendWalletError(reply, walletError('invalid_request', `no open wallet ${credit.walletId} to credit`, { field: 'credits' }));
      }
    }
    const walletId = found.wallet.id;
    const outcome = await desk.change(walletId, (wallet, now): WalletEvent | WalletError => {
      const reservation = wallet.reservations[found.reservation.id]!;
      if (reservation.status === 'settled' && reservation.settlement?.bodyHash === settlement.bodyHash) return REPLAY;
      if (reservation.status !== 'held' || now >= reservation.expiresAt) return notHeld(wallet, reservation, now);
      return { type: 'reservationSettled', at: now, reservationId: reservation.id, settlement, ...settlementOf(wallet, reservation, settlement, now) };
    });
    const settled = 'error' in outcome ? await desk.read(walletId) : outcome.wallet;
    const reservation = settled!.reservations[found.reservation.id]!;
    if ('error' in outcome && !(reservation.status === 'settled' && reservation.settlement?.bodyHash === settlement.bodyHash)) return sendWalletError(reply, outcome.error);
    // Settled (now or by the request this one repeats): each payee is credited once, whoever gets here first.
    for (const credit of reservation.settlement!.credits) await creditPayee(desk, credit.walletId, reservation.id, BigInt(credit.amount));
    return answer(reply, 200, (await desk.read(walletId))!, reservation.id, deps.clock.now());
  });

  app.post<{ Params: { id: string }; Body: { reason?: string } | undefined }>(
    `${PATH}/:id/release`,
    { onRequest: guard, preValidation: async (request) => void (request.body ??= {}), schema: { operationId: 'releaseAgentPactCredits', body: releaseBody } },
    async (request, reply) => {
      const found = await reservationOf(deps, request.params.id);
      if (!found) return sendWalletError(reply, walletError('not_found', `no reservation ${request.params.id}`));
      const outcome = await desk.change(found.wallet.id, (wallet, now): WalletEvent | WalletError => {
        const reservation = wallet.reservations[found.reservation.id]!;
        if (reservation.status === 'released') return REPLAY;
        if (reservation.status !== 'held') return notHeld(wallet, reservation, now);
        // A hold past its expiry has lapsed: it ends as the keeper would end it, and the release is refused.
        if (now >= reservation.expiresAt) return expiryOf(wallet, reservation, now);
        return { type: 'reservationReleased', at: now, reservationId: reservation.id, reason: request.body?.reason ?? null, ...releaseOf(wallet, reservation, now) };
      });
      if ('error' in outcome && outcome.error !== REPLAY) return sendWalletError(reply, outcome.error);
      const wallet = 'error' in outcome ? (await desk.read(found.wallet.id))! : outcome.wallet;
      const reservation = wallet.reservations[found.reservation.id]!;
      if (reservation.status === 'expired') return sendWalletError(reply, notHeld(wallet, reservation, deps.clock.now()));
      return answer(reply, 200, wallet, reservation.id, deps.clock.now());
    },
  );
}

const answer = (reply: FastifyReply, status: number, wallet: Wallet, id: string, now: number) => reply.code(status).send({ reservation: reservationView(wallet, wallet.reservations[id]!, now) });

function notHeld(wallet: Wallet, reservation: Reservation, now: number): WalletError {
  const view = reservationView(wallet, reservation, now);
  return walletError('reservation_not_held', `the reservation is ${view.status}`, { reservation: view });
}

/** The reservation's index entry, written if missing; one written meanwhile by another request is as good. */
async function indexed(tokens: TokenIndex, id: string, walletId: string): Promise<void> {
  if (await tokens.lookup(ownedKey('reservation', id))) return;
  await tokens.add({ tokenHash: ownedKey('reservation', id), walletId, kind: 'reservation' }).catch((error: unknown) => {
    if (!(error instanceof TokenTaken)) throw error;
  });
}

function settlementProblem(payer: string, reservation: Reservation, settlement: Settlement): WalletError | undefined {
  const debit = BigInt(settlement.debit);
  if (debit > BigInt(reservation.amount)) return walletError('invalid_request', `the debit is more than the ${reservation.amount} reserved`, { field: 'debit' });
  const credited = settlement.credits.reduce((total, credit) => total + BigInt(credit.amount), 0n);
  if (credited !== debit) return walletError('invalid_request', `the credits add up to ${credited}, not the debit ${debit}`, { field: 'credits' });
  if (settlement.credits.some((credit) => BigInt(credit.amount) === 0n)) return walletError('invalid_request', 'a credit is more than 0', { field: 'credits' });
  if (new Set(settlement.credits.map((credit) => credit.walletId)).size !== settlement.credits.length) return walletError('invalid_request', 'one credit per wallet', { field: 'credits' });
  if (settlement.credits.some((credit) => credit.walletId === payer)) return walletError('invalid_request', 'credits go to other wallets: what the payer keeps is the part not debited', { field: 'credits' });
  return undefined;
}

async function reservationOf(deps: ReservationRouteDeps, id: string): Promise<{ wallet: Wallet; reservation: Reservation } | undefined> {
  const wallet = await ownerOf(deps.tokens, deps.desk, 'reservation', id);
  const reservation = wallet?.reservations[id];
  return wallet && reservation ? { wallet, reservation } : undefined;
}

