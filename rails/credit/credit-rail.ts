import { parseCollectKey } from '../../machines/pact/collects.js';
import type { Pact, Payout } from '../../machines/pact/types.js';
import type { PartyId } from '../../protocol/party.js';
import { crashPoint } from '../../runtime/crash-points.js';
import { BoundedMap } from '../../storage/bounded-map.js';
import { WALLET_ID } from '../../wallet/secrets.js';
import { RailError, type CollectAt, type CollectPlace, type CollectRequest, type PayoutRequest, type Quote, type QuoteRequest, type Rail, type RailHealth, type RailReceipt } from '../rail.js';
import type { AskPlace, CreditHold, CreditHolds } from './credit-holds.js';
import { planPayouts, type Source, type SourcePlan } from './payout-plan.js';
import type { WalletClient } from './wallet-client.js';

export const CREDIT_ESCROW = 'credit:escrow';
/** A pact's hold lasts as long as the pact can (three windows of up to a year each, and a dispute): it must never lapse first. */
const HOLD_MS = 5 * 365 * 86_400_000;

export interface CreditRailDeps {
  wallet: WalletClient;
  holds: CreditHolds;
  /** The wallet a party bound on the credit rail (`POST /rails/credit/address`). */
  walletOf(party: string): Promise<string | undefined>;
  /** The pact as the read model holds it: the payouts of a transition and the holds they are paid from. */
  pactOf(pactId: string): Promise<Pact | undefined>;
  now(): number;
}

/**
 * Pacts funded from wallet credit (WALLET-DECISIONS.md, "Points settled"). A collect reserves the payer's deposit
 * and bond on the wallet it bound, under the key `<pactId>:<party>:<round>`; the money stays on that wallet, held.
 * A transition's payouts settle those holds: what goes to other parties is credited to their bound wallets, the
 * rest (a refund, a withdrawal, a party's own share) is released back.
 */
export class CreditRail implements Rail {
  readonly name = 'credit' as const;
  readonly escrowAccount = CREDIT_ESCROW;
  readonly needsRailAddress = false;
  private live = true;
  /** Whether the server's party, paid arbitration fees, has a wallet bound: until then no pact can be funded. */
  private feesPayable = false;
  /**
   * Holds this process saw settled or released lately: their payouts need not ask the wallet again. One
   * forgotten is asked again, and the wallet answers a repeat of the same settlement or release as the first;
   * so a settlement must be the same every time it is made (it is: from the closed pact and bound wallets).
   */
  private readonly finished = new BoundedMap<string, true>(10_000);

  constructor(private readonly deps: CreditRailDeps) {}

  get ready(): boolean {
    return this.live && this.feesPayable;
  }

  /** The server's fee wallet is bound: every payee a pact can have is payable now. */
  feePayeeBound(): void {
    this.feesPayable = true;
  }

  isAddress(address: string): boolean {
    return WALLET_ID.test(address);
  }

  readonly asset = 'USD';

  holds(asset: string): boolean {
    return asset === this.asset;
  }

  async quote({ payer, amount }: QuoteRequest): Promise<Quote> {
    const walletId = (await this.deps.walletOf(payer)) ?? null;
    const payWith = 'X-PAYMENT {"scheme":"credit","walletId":"<the bound wallet>"} with that wallet\'s Authorization: Bearer wk_…';
    const railData = walletId ? { scheme: 'credit', walletId, payWith } : { scheme: 'credit', walletId, payWith, bindFirst: 'POST /rails/credit/address' };
    return { requirement: { rail: 'credit', amount, asset: amount.asset, payTo: CREDIT_ESCROW, railData } };
  }

  async collect({ key, payer, amount, proof }: CollectRequest): Promise<RailReceipt> {
    const walletId = creditProofWallet(proof);
    if (!walletId) throw new RailError('invalid_proof', 'the credit rail takes {"scheme":"credit","walletId":"w_…"}');
    const bound = await this.deps.walletOf(payer);
    if (!bound) throw new RailError('wrong_payer', `${payer} has bound no wallet: POST /rails/credit/address first`);
    if (bound !== walletId) throw new RailError('wrong_payer', `${payer} pays from its bound wallet ${bound}, not ${walletId}`);
    if (BigInt(amount.amount) === 0n) return { key, ref: nothingHeld(key) };
    const parsed = parseCollectKey(key)!;
    const hold = await this.deps.holds.asking(key, {
      walletId,
      amount: { amount: amount.amount, asset: 'USD' },
      activity: { kind: 'pact', pactId: parsed.pactId, party: payer, role: 'funder' },
      expiresAt: new Date(this.deps.now() + HOLD_MS).toISOString(),
      memo: `pact ${parsed.pactId}, funding round ${parsed.round}`,
    });
    crashPoint('credit-asked'); // recorded, the wallet never asked
    const reservation = await this.reserve(hold).catch(async (error: unknown) => {
      if (error instanceof RailError && error.code !== 'rail_failure') await this.deps.holds.refused(hold, error.code);
      throw error;
    });
    crashPoint('credit-reserved'); // held on the wallet, the pact never told
    if (reservation.status !== 'held') throw new RailError('proof_already_used', `this funding round's hold is ${reservation.status}`);
    return { key, ref: reservation.id };
  }

  async collected(key: string): Promise<RailReceipt | undefined> {
    const reservationId = (await this.deps.holds.latest(key))?.reservationId;
    return reservationId ? { key, ref: reservationId } : undefined;
  }

  async payout(request: PayoutRequest): Promise<RailReceipt> {
    if (request.reverses !== undefined) {
      await this.release(request.reverses, `reversal of ${request.key}`);
      return { key: request.key, ref: request.reverses };
    }
    const pact = await this.deps.pactOf(request.pactId);
    const payout = pact?.payouts.find((p) => p.key === request.key);
    if (!pact || !payout) throw new RailError('rail_failure', `payout ${request.key} is not in the pact's record yet`);
    const sources = payout.transition.startsWith('withdraw.') ? await this.withdrawnHold(pact, payout) : heldBy(pact);
    const owed = pact.payouts.filter((p) => p.transition === payout.transition).sort(returnsFirst);
    const plan = planPayouts(sources, owed.map((p) => ({ key: p.key, party: p.party, amount: BigInt(p.amount) })));
    const from = plan.paidFrom.get(payout.key)!;
    const reference = `${pact.id}:${payout.transition}`;
    for (const sourcePlan of plan.sources.filter((s) => from.includes(s.source.reservationId))) {
      await this.finish(sourcePlan, pact, reference);
    }
    return { key: request.key, ref: from.length === 1 ? from[0]! : reference };
  }

  /**
   * The credit rail's collects: each ask of a hold (`CreditHolds.asks`), at its stream sequence. An ask whose
   * reading fails (its pact, the wallet) is undetermined: it is asked about again, and the walk goes on.
   */
  async *collects(from: number): AsyncIterable<CollectAt> {
    for await (const asked of this.deps.holds.asks(from)) {
      const place = await this.placeOf(asked).catch((error: unknown): CollectPlace => {
        console.error(`the credit hold asked at ${asked.seq} cannot be read now:`, String(error));
        return 'undetermined';
      });
      yield { position: asked.seq, place };
    }
  }

  async collectAt(position: number): Promise<CollectPlace> {
    const asked = await this.deps.holds.askAt(position);
    return asked ? this.placeOf(asked) : 'none';
  }

  /** The hold an ask made: its reservation; none when refused (an ask after it is a place of its own). */
  private async placeOf(asked: AskPlace): Promise<CollectPlace> {
    return asked.answer ? this.answered(asked) : this.lostAnswer(asked);
  }

  private answered({ ask, answer }: AskPlace): CollectPlace {
    if (!answer) return 'undetermined';
    return answer.reservationId ? { key: ask.key, ref: answer.reservationId, payer: ask.request.activity.party as PartyId, amount: ask.request.amount } : 'none';
  }

  /**
   * An ask whose answer a crash lost is asked for again (the same body and key find it) only once its pact has
   * left CREATED, when no retry can record it any more: if it was never made, it is made now and, orphaned,
   * released at once by the reconciler; if the wallet refuses it now, that is recorded, and it held nothing. The
   * place is then read again: another node's answer may have come first.
   */
  private async lostAnswer({ seq, ask }: AskPlace): Promise<CollectPlace> {
    const pact = await this.deps.pactOf(ask.request.activity.pactId);
    if (!pact || pact.state === 'CREATED') return 'undetermined'; // the payer's retry finds the hold
    try {
      await this.reserve(ask);
    } catch (error) {
      if (!(error instanceof RailError) || error.code === 'rail_failure') return 'undetermined'; // the wallet cannot say now: the next pass asks again
      await this.deps.holds.refused(ask, error.code);
    }
    const now = await this.deps.holds.askAt(seq);
    return now ? this.answered(now) : 'undetermined';
  }

  async health(): Promise<RailHealth> {
    this.live = await this.deps.wallet.live();
    return { live: this.live, solvency: { ok: true, heldOn: 'payer wallets' }, payoutsReady: this.live && this.feesPayable, feeWalletBound: this.feesPayable };
  }

  /** Asks the wallet for the hold (again: the same body and key find the same reservation) and records its id. */
  private async reserve(hold: CreditHold) {
    const { pactId, party } = hold.request.activity;
    const round = parseCollectKey(hold.key)!.round;
    const reservation = await this.deps.wallet.reserve(hold.request, `${pactId}:${party}:${round}`);
    if (hold.reservationId === null) await this.deps.holds.reserved(hold, reservation.id);
    return reservation;
  }

  /** The hold a withdrawal pays back: the party's round counted by the withdrawals before it. */
  private async withdrawnHold(pact: Pact, payout: Payout): Promise<Source[]> {
    const withdrawals = [...new Set(pact.payouts.filter((p) => p.party === payout.party && p.transition.startsWith('withdraw.')).map((p) => p.transition))];
    const key = `${pact.id}:fund.${withdrawals.indexOf(payout.transition)}:${payout.party}`;
    const hold = await this.deps.holds.latest(key);
    if (!hold) throw new RailError('rail_failure', `no credit hold was recorded for ${key}`);
    const reservationId = hold.reservationId ?? (await this.reserve(hold)).id;
    return [{ party: payout.party, reservationId, amount: BigInt(hold.request.amount.amount) }];
  }

  /**
   * Settles one hold as planned: credits to the payees' bound wallets (a payee without one holds the payout:
   * `no_address`), the rest back to the payer; with nothing to credit, the hold is released whole.
   */
  private async finish({ source, credits }: SourcePlan, pact: Pact, reference: string): Promise<void> {
    if (this.finished.has(source.reservationId)) return;
    const payer = await this.deps.walletOf(source.party);
    const byWallet = new Map<string, bigint>();
    for (const [party, amount] of credits) {
      const walletId = await this.deps.walletOf(party);
      if (!walletId) throw new RailError('no_address', `${party} has bound no credit wallet to be paid in`);
      if (walletId !== payer) byWallet.set(walletId, (byWallet.get(walletId) ?? 0n) + amount);
    }
    if (byWallet.size === 0) return this.release(source.reservationId, reference);
    const usd = (amount: bigint) => ({ amount: amount.toString(), asset: 'USD' as const });
    const debit = [...byWallet.values()].reduce((sum, amount) => sum + amount, 0n);
    await this.deps.wallet.settle(source.reservationId, {
      activityState: pact.state === 'SETTLED' ? 'SETTLED' : 'CANCELLED',
      debit: usd(debit),
      credits: [...byWallet].map(([walletId, amount]) => ({ walletId, amount: usd(amount) })),
      reference,
    });
    crashPoint('credit-settled'); // settled on the wallet, the payout never recorded
    this.finished.set(source.reservationId, true);
  }

  private async release(reservationId: string, reason: string): Promise<void> {
    if (this.finished.has(reservationId) || reservationId.startsWith(NOTHING_HELD)) return;
    await this.deps.wallet.release(reservationId, reason);
    this.finished.set(reservationId, true);
  }
}

/** A party's deposit and bond coming back are paid from its own hold before its share of the pot is. */
const KIND_ORDER: Payout['kind'][] = ['deposit', 'bond', 'pot', 'fee'];
const returnsFirst = (a: Payout, b: Payout) => KIND_ORDER.indexOf(a.kind) - KIND_ORDER.indexOf(b.kind);

const NOTHING_HELD = 'credit-nothing:';
/** The receipt of a collect of 0: nothing was held. */
const nothingHeld = (key: string) => `${NOTHING_HELD}${key}`;

/** The holds a closing transition pays from: every funded party's, whose receipt names its reservation. */
function heldBy(pact: Pact): Source[] {
  return pact.parties
    .filter((p) => p.confirmed && p.receipt !== null && !p.receipt.startsWith(NOTHING_HELD))
    .map((p) => ({ party: p.party, reservationId: p.receipt!, amount: BigInt(p.paidPot) + BigInt(p.paidBond) }));
}

/** The wallet an `X-PAYMENT` of the credit rail names, if it is one. */
export function creditProofWallet(proof: unknown): string | undefined {
  if (typeof proof !== 'object' || proof === null) return undefined;
  const { scheme, walletId } = proof as { scheme?: unknown; walletId?: unknown };
  return scheme === 'credit' && typeof walletId === 'string' && WALLET_ID.test(walletId) ? walletId : undefined;
}
