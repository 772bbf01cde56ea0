import { connect, type NatsConnection } from '@nats-io/transport-node';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { PactSpec } from '../../../machines/pact/spec.js';
import type { Pact, PactState } from '../../../machines/pact/types.js';
import { jcs } from '../../../protocol/jcs.js';
import type { Action } from '../../../protocol/signed-call.js';
import { tradeSpec } from '../parties.js';
import type { Stack } from '../stack.js';
import { fuzzKey, sign, signedBy, type FuzzKey } from './keys.js';
import type { Rng } from './prng.js';

// The pacts the fuzzer attacks, set up through the real API, and a snapshot of everything a request could
// change: each pact's whole record, the list of pacts, the mock rail ledger, the journal's last sequence.

export type Body = Record<string, any>;

export const HOUR = 3_600_000;
export const MOCK_PROOF = JSON.stringify({ scheme: 'mock' });

export interface Fixture {
  label: string;
  id: string;
  seller: FuzzKey;
  buyer: FuzzKey;
  /** The record when the fuzzing started (refreshed by `World.refresh`). */
  pact: Pact;
}

/** A call that was applied during setup (or answered without effect, like a proofless fund): replayed later. */
export interface Applied {
  label: string;
  path: string;
  body: Body;
  headers: Record<string, string>;
  /** `create`: a replay answers 200 with the same pact; `command`: a replay is refused with 409. */
  kind: 'create' | 'command';
  pactId: string;
}

export interface Snapshot {
  pacts: Record<string, string>;
  /** Every pact id the list shows, sorted. */
  ids: string[];
  ledger: string;
  ledgerOps: number;
  journalSeq: number;
  journalMessages: number;
}

export class World {
  readonly fixtures: Fixture[] = [];
  readonly applied: Applied[] = [];
  readonly evaluator: FuzzKey;
  /** Keys that are party to no pact. */
  readonly outsiders: FuzzKey[];
  private nc: NatsConnection | undefined;
  private jsm: JetStreamManager | undefined;
  /** Server clock minus local clock, read once through the test hook. */
  private skew = 0;

  constructor(
    readonly stack: Stack,
    private readonly rng: Rng,
  ) {
    this.evaluator = fuzzKey(stack.evaluator.secretKey);
    this.outsiders = Array.from({ length: 4 }, () => this.newKey());
  }

  newKey(): FuzzKey {
    return fuzzKey(this.rng.bytes(32));
  }

  /** The server's clock now (estimated from one reading and the local clock). */
  now(): number {
    return Date.now() + this.skew;
  }

  byLabel(label: string): Fixture {
    const fixture = this.fixtures.find((f) => f.label === label);
    if (!fixture) throw new Error(`no fixture ${label}`);
    return fixture;
  }

  isParty(fixture: Fixture, party: unknown): boolean {
    return fixture.pact.parties.some((p) => p.party === party);
  }

  envelope(key: FuzzKey, action: Action | string, pactId: string, stateNonce: number, call: unknown, issuedAt = this.now()): Body {
    return signedBy({ action, call, pactId, stateNonce, issuedAt, signer: key.party }, key);
  }

  /** The approval `{ action: "cancel", pactId, stateNonce, expiresAt }` signed by `key`. */
  approval(key: FuzzKey, pactId: string, stateNonce: number, expiresAt: number) {
    return { signer: key.party, sig: sign({ action: 'cancel', pactId, stateNonce, expiresAt }, key) };
  }

  verdictBody(key: FuzzKey, pactId: string, inputHash: string, distribution: unknown, feeFrom = 'objector'): Body {
    return signedBy({ pactId, inputHash, distribution, feeFrom, reason: 'fuzz', issuedAt: this.now(), signer: key.party }, key);
  }

  spec(seller: FuzzKey, buyer: FuzzKey): PactSpec {
    return tradeSpec(seller, buyer);
  }

  // ---- setup -------------------------------------------------------------------------------------

  /**
   * CREATED with nothing funded, CREATED with the seller funded, ACTIVE, PROPOSED, DISPUTED, SETTLED by
   * cosign, SETTLED by verdict, CANCELLED by mutual consent; then waits until every payout is paid.
   */
  async setUp(): Promise<void> {
    this.skew = (await this.stack.advanceClock(0)) - Date.now();
    const plans: [label: string, upTo: PactState | 'CREATED+1' | 'SETTLED/verdict' | 'CANCELLED'][] = [
      ['created-unfunded', 'CREATED'],
      ['created-seller-funded', 'CREATED+1'],
      ['active', 'ACTIVE'],
      ['proposed', 'PROPOSED'],
      ['disputed', 'DISPUTED'],
      ['settled-cosign', 'SETTLED'],
      ['settled-verdict', 'SETTLED/verdict'],
      ['cancelled', 'CANCELLED'],
    ];
    const keys = plans.map(() => ({ seller: this.newKey(), buyer: this.newKey() }));
    await Promise.all(plans.map(([label, upTo], i) => this.build(label, upTo, keys[i]!.seller, keys[i]!.buyer)));
    await this.stack.payoutsIdle(30_000);
    for (const f of this.fixtures) if (f.pact.payouts.length > 0) await this.stack.settledPayouts(f.id, 30_000);
    await this.refresh();
    this.nc = await connect({ servers: this.stack.natsUrl.split(',') });
    this.jsm = await jetstreamManager(this.nc);
  }

  async close(): Promise<void> {
    await this.nc?.close();
  }

  private async post(path: string, body: Body, headers: Record<string, string> = {}): Promise<Pact> {
    const res = await this.stack.client.request('POST', path, body, headers);
    if (res.status !== 200) throw new Error(`setup: ${path} answered ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.pact as Pact;
  }

  private async command(label: string, pact: Pact, path: string, body: Body, headers: Record<string, string> = {}): Promise<Pact> {
    const next = await this.post(`/pacts/${pact.id}/${path}`, body, headers);
    this.applied.push({ label: `${label} ${path}@${pact.stateNonce}`, path: `/pacts/${pact.id}/${path}`, body, headers, kind: 'command', pactId: pact.id });
    return next;
  }

  private async fund(label: string, pact: Pact, key: FuzzKey): Promise<Pact> {
    const body = this.envelope(key, 'pacts.fund', pact.id, pact.stateNonce, {});
    const quote = await this.stack.client.request('POST', `/pacts/${pact.id}/fund`, body);
    if (quote.status !== 402) throw new Error(`setup: proofless fund answered ${quote.status} ${JSON.stringify(quote.body)}`);
    this.applied.push({ label: `${label} proofless fund@${pact.stateNonce}`, path: `/pacts/${pact.id}/fund`, body, headers: {}, kind: 'command', pactId: pact.id });
    return this.command(label, pact, 'fund', body, { 'x-payment': MOCK_PROOF });
  }

  private async build(label: string, upTo: string, seller: FuzzKey, buyer: FuzzKey): Promise<void> {
    const create = this.envelope(seller, 'pacts.create', '', 0, this.spec(seller, buyer));
    let pact = await this.post('/pacts', create);
    this.applied.push({ label: `${label} create`, path: '/pacts', body: create, headers: {}, kind: 'create', pactId: pact.id });
    const halves = [{ party: seller.party, bp: 5000 }, { party: buyer.party, bp: 5000 }];
    if (upTo !== 'CREATED') pact = await this.fund(label, pact, seller);
    if (upTo !== 'CREATED' && upTo !== 'CREATED+1') pact = await this.fund(label, pact, buyer);
    if (upTo === 'CANCELLED') {
      const expiresAt = this.now() + HOUR;
      const sigs = [this.approval(seller, pact.id, pact.stateNonce, expiresAt), this.approval(buyer, pact.id, pact.stateNonce, expiresAt)];
      pact = await this.command(label, pact, 'cancel', this.envelope(seller, 'pacts.cancel', pact.id, pact.stateNonce, { expiresAt, sigs }));
    }
    if (['PROPOSED', 'DISPUTED', 'SETTLED', 'SETTLED/verdict'].includes(upTo)) {
      const proposal = { evidence: [{ note: 'delivered' }, { url: 'https://example.org/out.md' }], distribution: halves };
      pact = await this.command(label, pact, 'propose', this.envelope(seller, 'pacts.propose', pact.id, pact.stateNonce, proposal));
    }
    if (upTo === 'SETTLED') pact = await this.command(label, pact, 'cosign', this.envelope(buyer, 'pacts.cosign', pact.id, pact.stateNonce, {}));
    if (upTo === 'DISPUTED' || upTo === 'SETTLED/verdict') {
      pact = await this.command(label, pact, 'object', this.envelope(buyer, 'pacts.object', pact.id, pact.stateNonce, { reason: 'late' }));
    }
    if (upTo === 'SETTLED/verdict') {
      const verdict = this.verdictBody(this.evaluator, pact.id, pact.inputHash!, [{ party: seller.party, bp: 2000 }, { party: buyer.party, bp: 8000 }], 'split');
      pact = await this.command(label, pact, 'verdict', verdict);
    }
    this.fixtures.push({ label, id: pact.id, seller, buyer, pact });
  }

  /** Re-reads every fixture's record (the payouts of settled ones are paid after the setup call). */
  async refresh(): Promise<void> {
    for (const f of this.fixtures) {
      const res = await this.stack.client.get(f.id);
      if (res.status !== 200) throw new Error(`fixture ${f.label} unreadable: ${res.status}`);
      f.pact = res.body.pact;
    }
    this.fixtures.sort((a, b) => (a.label < b.label ? -1 : 1));
  }

  // ---- what must not change ------------------------------------------------------------------------

  async snapshot(): Promise<Snapshot> {
    const pacts: Record<string, string> = {};
    for (const f of this.fixtures) {
      const res = await this.stack.client.get(f.id);
      pacts[f.label] = res.status === 200 ? jcs(res.body.pact) : `HTTP ${res.status} ${JSON.stringify(res.body)}`;
    }
    const ids: string[] = [];
    let since: number | null = 0;
    for (let page = 0; since !== null && page < 50; page++) {
      const res: { status: number; body: any } = await this.stack.client.request('GET', `/pacts?limit=200&since=${since}`);
      if (res.status !== 200) throw new Error(`list answered ${res.status}`);
      for (const p of res.body.pacts as Pact[]) ids.push(p.id);
      since = res.body.nextSince;
    }
    const ledger = await this.stack.ledger();
    const info = await this.jsm!.streams.info('PACT_JOURNAL');
    return {
      pacts,
      ids: [...new Set(ids)].sort(),
      ledger: jcs(ledger),
      ledgerOps: ledger.operations.length,
      journalSeq: info.state.last_seq,
      journalMessages: info.state.messages,
    };
  }
}

/** Lines naming what differs between two snapshots; empty when nothing changed. */
export function differences(before: Snapshot, after: Snapshot): string[] {
  const out: string[] = [];
  for (const [label, text] of Object.entries(before.pacts)) {
    const now = after.pacts[label];
    if (now === text) continue;
    const summary = (t: string | undefined) => {
      try {
        const p = JSON.parse(t ?? '') as Pact;
        return `${p.state}@${p.stateNonce}, ${p.payouts.length} payouts`;
      } catch {
        return String(t).slice(0, 200);
      }
    };
    out.push(`pact ${label} changed: ${summary(text)} -> ${summary(now)}`);
  }
  const added = after.ids.filter((id) => !before.ids.includes(id));
  const removed = before.ids.filter((id) => !after.ids.includes(id));
  if (added.length) out.push(`${added.length} new pact(s) in the list: ${added.slice(0, 5).join(', ')}${added.length > 5 ? ', …' : ''}`);
  if (removed.length) out.push(`${removed.length} pact(s) gone from the list: ${removed.slice(0, 5).join(', ')}`);
  if (after.ledger !== before.ledger) out.push(`mock rail ledger changed: ${before.ledgerOps} -> ${after.ledgerOps} operations (balances or operations differ)`);
  if (after.journalSeq !== before.journalSeq) {
    out.push(`journal PACT_JOURNAL last_seq ${before.journalSeq} -> ${after.journalSeq} (messages ${before.journalMessages} -> ${after.journalMessages})`);
  }
  return out;
}
