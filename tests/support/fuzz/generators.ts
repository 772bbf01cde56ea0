import { parsePaymentHeader } from '../../../actors/admission.js';
import { canonicalHashHex } from '../../../protocol/digest.js';
import { jcs } from '../../../protocol/jcs.js';
import { signedPart } from '../../../protocol/signed-call.js';
import {
  clone,
  deleteAt,
  getAt,
  keyPaths,
  marker,
  nested,
  nestedValue,
  numberPaths,
  objectPaths,
  paths,
  render,
  renameKey,
  setAt,
  stringPaths,
  type Injection,
  type Path,
} from './bodies.js';
import type { FuzzRequest } from './http.js';
import { IDENTITY_PARTY, SMALL_ORDER_KEYS, SMALL_ORDER_SIGS, sign, verifies, type FuzzKey } from './keys.js';
import type { Rng } from './prng.js';
import { HOUR, MOCK_PROOF, type Body, type Fixture, type World } from './world.js';
import bs58 from 'bs58';

// The request generators, grouped in families. Each class yields `count` requests, lazily, from its own
// fork of the seeded PRNG. Every body starts from a "base": an inert call (signed by a non-party, with a
// stale nonce, or a create with a stale issuedAt) that the server must refuse whatever else is wrong with
// it, or, for the signature classes only, a call that WOULD apply if its signature were right. The guard
// (`legitimateEffect`) withholds any request that could legitimately change state, so "nothing changed"
// holds for a correct server.

export const SIGNED_ROUTES = ['fund', 'withdraw', 'propose', 'cosign', 'object', 'cancel'] as const;
export const BODY_ROUTES = ['create', ...SIGNED_ROUTES, 'verdict'] as const;
export type SignedRoute = (typeof SIGNED_ROUTES)[number];
export type BodyRoute = (typeof BODY_ROUTES)[number];
const ACTION: Record<Exclude<BodyRoute, 'verdict'>, string> = {
  create: 'pacts.create',
  fund: 'pacts.fund',
  withdraw: 'pacts.withdraw',
  propose: 'pacts.propose',
  cosign: 'pacts.cosign',
  object: 'pacts.object',
  cancel: 'pacts.cancel',
};
const ALL_ACTIONS = [
  ...Object.values(ACTION), 'rails.bindAddress', 'access.request', 'access.verify', 'access.admin', 'pacts.steal', '', 'PACTS.COSIGN',
];

export interface Base {
  route: BodyRoute | 'poke';
  fixture?: Fixture;
  path: string;
  body: Body;
  /** The key whose signature the body carries (to sign a changed body again). */
  key?: FuzzKey;
  headers?: Record<string, string>;
}

export interface FuzzClass {
  family: string;
  name: string;
  count: number;
  /** Resets and timeouts are legitimate here (431 and 413 answers close the connection). */
  transportErrorsAllowed?: boolean;
  /** Sent although the guard says they could apply: forged signatures that a correct server refuses. */
  bypassGuard?: boolean;
  generate(g: Gen, count: number, rng: Rng): Iterable<FuzzRequest>;
}

const JSON_HEADERS = { 'content-type': 'application/json' };
const WRONG_TYPED: unknown[] = [null, true, false, 0, -1, 1.5, 1e308, '', 'x', [], {}, [null], { a: 1 }, '0', 'null', [1, 2, 3]];
const NUMBER_TOKENS = [
  '-1', '-0', '0.5', '1.0', '1e3', '1E400', '-1e400', '1e-400', '9007199254740993', '9007199254740992', '18446744073709551616',
  '123456789012345678901234567890', '2e308', '4.9e-324', '-9007199254740993', '8640000000000001', `1${'0'.repeat(400)}`,
  '0.0000001', '-0.0', '1e+2', '3.14159', '9'.repeat(30), '-9'.repeat(1),
  // not JSON at all
  '0x10', 'NaN', 'Infinity', '-Infinity', '+1', '01', '.5', '1.', '-', '1e', '1_000', '٣',
];
const LONE_SURROGATES = ['\\ud800', '\\udfff', 'x\\ud800y', '\\udc00\\ud800', 'abc\\udbff', '\\ud800\\ud800', '\\uDFFF'];
const BAD_UTF8: number[][] = [[0xff], [0xc0, 0x80], [0xed, 0xa0, 0x80], [0xe2, 0x82], [0xf8, 0x88, 0x80, 0x80, 0x80], [0x80], [0xf4, 0x90, 0x80, 0x80], [0xfe, 0xfe, 0xff]];

const pathText = (path: Path) => path.join('.') || '(root)';

function sameJcs(a: unknown, b: unknown): boolean {
  try {
    return jcs(a) === jcs(b);
  } catch {
    return false;
  }
}

/** What the generators share: the world, the bases, the guard. */
export class Gen {
  private live: Base[] | undefined;

  constructor(readonly world: World) {}

  fixtures(): Fixture[] {
    return this.world.fixtures;
  }

  pathOf(route: BodyRoute | 'poke', fixture?: Fixture): string {
    return route === 'create' ? '/pacts' : `/pacts/${fixture!.id}/${route}`;
  }

  richSpec(a: FuzzKey, b: FuzzKey): Body {
    const usdc = (amount: string) => ({ amount, asset: 'USDC' });
    return {
      rail: 'mock',
      parties: [
        { party: a.party, deposit: usdc('0'), bond: usdc('50'), required: true },
        { party: b.party, deposit: usdc('1001'), bond: usdc('75'), required: true },
      ],
      proposer: a.party,
      terms: { spec: 'deliver a summary of the fuzz report' },
      minParties: 2,
      windows: { fund: HOUR, perform: 2 * HOUR, object: HOUR },
      groupId: 'g-fuzz',
      evaluator: {},
    };
  }

  callFor(route: SignedRoute, f: Fixture, nonce: number): Body {
    const w = this.world;
    switch (route) {
      case 'fund':
      case 'withdraw':
      case 'cosign':
        return {};
      case 'propose':
        return {
          evidence: [{ note: 'done' }, { url: 'https://example.org/a.md' }, { blob: 'ab'.repeat(32), note: 'n' }],
          distribution: [{ party: f.seller.party, bp: 6000 }, { party: f.buyer.party, bp: 4000 }],
        };
      case 'object':
        return { reason: 'late delivery' };
      case 'cancel': {
        const expiresAt = w.now() + HOUR;
        return { expiresAt, sigs: [w.approval(f.seller, f.id, nonce, expiresAt), w.approval(f.buyer, f.id, nonce, expiresAt)] };
      }
    }
  }

  /** A call the server must refuse however it is dressed: non-party signer, stale or future nonce, stale create. */
  inertBase(rng: Rng, route: BodyRoute | 'poke'): Base {
    const w = this.world;
    const f = rng.pick(this.fixtures());
    if (route === 'poke') return { route, fixture: f, path: this.pathOf('poke', f), body: {} };
    if (route === 'create') {
      const key = rng.chance(0.5) ? rng.pick(w.outsiders) : w.newKey();
      const body = w.envelope(key, 'pacts.create', '', 0, this.richSpec(key, w.newKey()), w.now() - rng.int(1, 48) * HOUR);
      return { route, path: '/pacts', body, key };
    }
    if (route === 'verdict') {
      const distribution = [{ party: f.seller.party, bp: 5000 }, { party: f.buyer.party, bp: 5000 }];
      if (rng.chance(0.5)) {
        const wrongHash = rng.hex(64);
        return { route, fixture: f, path: this.pathOf(route, f), body: w.verdictBody(w.evaluator, f.id, wrongHash, distribution), key: w.evaluator };
      }
      const key = rng.pick(w.outsiders);
      return { route, fixture: f, path: this.pathOf(route, f), body: w.verdictBody(key, f.id, f.pact.inputHash ?? rng.hex(64), distribution), key };
    }
    const current = f.pact.stateNonce;
    let key: FuzzKey;
    let nonce: number;
    if (rng.chance(0.5)) {
      key = rng.pick(w.outsiders);
      nonce = rng.chance(0.7) ? current : rng.int(0, 20);
    } else {
      key = rng.chance(0.5) ? f.seller : f.buyer;
      nonce = current > 0 && rng.chance(0.6) ? rng.int(0, current - 1) : current + rng.int(1, 5);
    }
    const body = w.envelope(key, ACTION[route], f.id, nonce, this.callFor(route, f, nonce));
    return { route, fixture: f, path: this.pathOf(route, f), body, key };
  }

  /**
   * Calls that WOULD apply if sent as they are (with a mock proof for funds): only for the signature
   * classes, which break the signature before sending.
   */
  liveBases(): Base[] {
    this.live ??= this.makeLiveBases();
    return this.live;
  }

  private makeLiveBases(): Base[] {
    const w = this.world;
    const bases: Base[] = [];
    const seller = w.newKey();
    bases.push({ route: 'create', path: '/pacts', body: w.envelope(seller, 'pacts.create', '', 0, this.richSpec(seller, w.newKey())), key: seller });
    const add = (label: string, route: SignedRoute, who: 'seller' | 'buyer') => {
      const f = w.byLabel(label);
      const key = f[who];
      const body = w.envelope(key, ACTION[route], f.id, f.pact.stateNonce, this.callFor(route, f, f.pact.stateNonce));
      bases.push({ route, fixture: f, path: this.pathOf(route, f), body, key, headers: route === 'fund' ? { 'x-payment': MOCK_PROOF } : {} });
    };
    add('created-unfunded', 'fund', 'seller');
    add('created-unfunded', 'fund', 'buyer');
    add('created-seller-funded', 'fund', 'buyer');
    add('created-seller-funded', 'withdraw', 'seller');
    add('active', 'propose', 'seller');
    add('active', 'cancel', 'buyer');
    add('proposed', 'cosign', 'buyer');
    add('proposed', 'object', 'buyer');
    add('proposed', 'cancel', 'seller');
    const d = w.byLabel('disputed');
    const verdict = w.verdictBody(w.evaluator, d.id, d.pact.inputHash!, [{ party: d.seller.party, bp: 3000 }, { party: d.buyer.party, bp: 7000 }]);
    bases.push({ route: 'verdict', fixture: d, path: this.pathOf('verdict', d), body: verdict, key: w.evaluator });
    return bases;
  }

  resign(body: Body, key: FuzzKey | undefined): Body {
    if (!key) return body;
    const { sig: _sig, ...rest } = body;
    return { ...rest, sig: sign(rest, key) };
  }

  /**
   * Renders `body` with `injections`; with `key`, signs what the server will parse (the text decoded as
   * UTF-8 with replacement characters), so that the injected thing is the only thing wrong.
   */
  renderSigned(body: Body, injections: Injection[], key: FuzzKey | undefined): Buffer {
    if (!key || !('sig' in body)) return render(body, injections);
    const sigMarker = marker();
    const withMarker = { ...body, sig: sigMarker };
    const draft = render(withMarker, injections);
    let sig = 'e'.repeat(128);
    try {
      const parsed = JSON.parse(draft.toString('utf8'));
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) sig = sign(signedPart(parsed), key);
    } catch {
      // not JSON after the injection: any signature will do
    }
    return render(withMarker, [...injections, { marker: sigMarker, raw: JSON.stringify(sig) }]);
  }

  /** A POST of `bytes` to the base's route with JSON content type (plus the base's headers). */
  post(base: Base, bytes: Buffer | string, note: string, extra: Partial<FuzzRequest> = {}): FuzzRequest {
    return { method: 'POST', path: base.path, headers: { ...JSON_HEADERS, ...(base.headers ?? {}) }, body: bytes, note: `${base.route}: ${note}`, ...extra };
  }

  // ---- the guard -----------------------------------------------------------------------------------

  /**
   * Why `req` could legitimately change state on a correct server (then it is not sent), or undefined.
   * It reads the request as the server would: the path's pact and verb, the body decoded as UTF-8 and
   * parsed with JSON.parse, the signature checked with the server's own verifier, X-PAYMENT parsed with
   * the server's own parser.
   */
  legitimateEffect(req: FuzzRequest): string | undefined {
    if (req.raw) return undefined;
    let path = req.path.split('?')[0]!.replace(/\/+/g, '/').replace(/(.)\/$/, '$1');
    try {
      path = path.split('/').map((s) => decodeURIComponent(s)).join('/');
    } catch {
      // undecodable: the router refuses it
    }
    if (path.toLowerCase().includes('__test')) return 'a test hook';
    const method = req.method.toUpperCase();
    if (method !== 'POST') return undefined;
    const m = /^\/pacts(?:\/([^/]*)\/([^/]*))?$/i.exec(path);
    if (!m) return undefined;
    const verb = (m[2] ?? 'create').toLowerCase();
    if (verb === 'poke') return undefined; // nothing is due on any fixture
    if (req.body === undefined) return undefined;
    let body: any;
    try {
      body = JSON.parse(Buffer.isBuffer(req.body) ? req.body.toString('utf8') : req.body);
    } catch {
      return undefined;
    }
    if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
    if (!verifies(body.signer, signedPart(body), body.sig)) return undefined;
    if (verb === 'create') {
      if (m[1] !== undefined) return undefined;
      if (this.fixtures().some((f) => f.id === `p_${canonicalHashHex(signedPart(body)).slice(0, 32)}`)) return undefined; // a replay
      return body.action === 'pacts.create' && Math.abs(Number(body.issuedAt) - this.world.now()) < 11 * 60_000 ? 'a fresh valid create' : undefined;
    }
    const fixture = this.fixtures().find((f) => f.id === m[1]);
    if (!fixture) return undefined;
    if (verb === 'verdict') {
      const p = fixture.pact;
      return body.signer === this.world.evaluator.party && p.state === 'DISPUTED' && body.inputHash === p.inputHash ? 'a valid verdict' : undefined;
    }
    if (body.action !== ACTION[verb as SignedRoute] || body.pactId !== fixture.id) return undefined; // signed for another route
    if (!this.world.isParty(fixture, body.signer) || body.stateNonce !== fixture.pact.stateNonce) return undefined;
    if (verb === 'fund') {
      const header = Object.entries(req.headers ?? {}).find(([k]) => k.toLowerCase() === 'x-payment')?.[1];
      if (header === undefined) return undefined; // a quote
      const proof = parsePaymentHeader(Array.isArray(header) ? header.join(', ') : String(header)) as { scheme?: unknown } | undefined;
      return proof?.scheme === 'mock' ? 'a valid paid fund' : undefined;
    }
    return `a valid ${verb} by a party at the current nonce`;
  }
}

// ---- expectations ----------------------------------------------------------------------------------

export const expectOneOf =
  (why: string, ...statuses: number[]) =>
  (status: number) =>
    statuses.includes(status) ? undefined : `${why}: expected ${statuses.join(' or ')}, got ${status}`;

/** A request whose signature is wrong: the signature is the first check (401), or the body's shape (400). */
const signatureRefused = expectOneOf('a wrong signature is refused', 400, 401);

// ---- helpers ---------------------------------------------------------------------------------------

function* times<T>(count: number, make: (i: number) => T | undefined): Iterable<T> {
  for (let i = 0; i < count; i++) {
    const item = make(i);
    if (item !== undefined) yield item;
  }
}

const routeAt = (i: number) => BODY_ROUTES[i % BODY_ROUTES.length]!;
/** The k-th item, cycling: to walk every field of a body in turn rather than at random. */
const nth = <T>(items: T[], k: number): T => items[k % items.length]!;
const withPoke = (i: number): BodyRoute | 'poke' => (i % (BODY_ROUTES.length + 1) === BODY_ROUTES.length ? 'poke' : BODY_ROUTES[i % (BODY_ROUTES.length + 1)]!);

function differentValue(rng: Rng, value: unknown, g: Gen): unknown {
  if (typeof value === 'number') return rng.pick([value + 1, value - 1, 0, -value - 1, value * 2 + 1]);
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'string') {
    if (value.startsWith('ed25519:')) return rng.pick(g.world.outsiders).party;
    if (/^[0-9a-f]{64,}$/.test(value)) return (value[0] === '0' ? '1' : '0') + value.slice(1);
    if (value.startsWith('pacts.')) return rng.pick(ALL_ACTIONS.filter((a) => a !== value));
    if (value.startsWith('p_')) return rng.pick(g.fixtures().map((f) => f.id).filter((id) => id !== value).concat(['']));
    if (value === '') return 'p_' + rng.hex(32);
    return value + rng.pick(['x', ' ', '0', '\u00e9']);
  }
  if (Array.isArray(value)) return [...value, value[0] ?? 1];
  if (value && typeof value === 'object') return { ...value, extra: 1 };
  return 'changed';
}

// ====================================================================================================
// structural

const structural: FuzzClass[] = [
  {
    family: 'structural',
    name: 'invalid JSON',
    count: 500,
    *generate(g, count, rng) {
      const garbage = [
        '{', '}', '{"a":}', "{'action':'pacts.fund'}", '{"a":1,}', '[1,]', '{"a" 1}', '/*c*/{}', '{"a":NaN}', '{"a":undefined}', '{"a":0x1}',
        '\ufeff{}', '{}}', '{}{}', '{"a":"\\x"}', '{"a":"\\u12"}', '{"a":"\\u12G4"}', '{"a":"unterminated}', 'nul', 'tru', '{"a":1 "b":2}',
        '{,}', '{"a"::1}', '{"a":[1,2}', '"\\"', '{"\\":1}', '{"a":1}garbage', '{"a":-}', '{"a":--1}', "{\"a\":'x'}",
      ];
      yield* times(count, (i) => {
        const base = g.inertBase(rng, withPoke(i));
        const text = JSON.stringify(base.body);
        const kind = i % 4;
        if (kind === 0) return g.post(base, rng.pick(garbage), 'garbage JSON');
        if (kind === 1) {
          const at = rng.int(0, text.length - 1);
          return g.post(base, text.slice(0, at) + rng.pick(['{', '}', '[', ']', '"', ',', ':', '\\', "'", 'x', ' ', '\u0000']) + text.slice(at), 'a character inserted');
        }
        if (kind === 2) {
          const at = rng.int(0, text.length - 1);
          return g.post(base, text.slice(0, at) + text.slice(at + 1), 'a character deleted');
        }
        return g.post(base, rng.bytes(rng.int(1, 200)), 'random bytes');
      });
    },
  },
  {
    family: 'structural',
    name: 'truncated JSON',
    count: 500,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, withPoke(i));
        const text = JSON.stringify(base.body);
        return g.post(base, text.slice(0, rng.int(i % 9 === 0 ? 0 : 1, text.length - 1)), 'truncated');
      });
    },
  },
  {
    family: 'structural',
    name: 'wrong content-type',
    count: 400,
    *generate(g, count, rng) {
      const types = [
        undefined, 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data', 'multipart/form-data; boundary=x',
        'application/octet-stream', 'application/json; charset=latin1', 'application/json; charset=utf-16', 'APPLICATION/JSON',
        'application/json-patch+json', 'application/jsonx', 'json', '', ' ', 'application/json, text/plain', 'application/*', '*/*',
        'text/json', 'application/json;;;', 'application/json; charset="utf-8"', 'application/json; boundary', 'application/xml',
        'application/json\u0000', 'x'.repeat(2000),
      ];
      yield* times(count, (i) => {
        const base = g.inertBase(rng, withPoke(i));
        const type = rng.pick(types);
        const body = i % 3 === 0 ? new URLSearchParams({ action: 'pacts.fund', sig: '00' }).toString() : JSON.stringify(base.body);
        const headers: Record<string, string> = { ...(base.headers ?? {}) };
        if (type !== undefined) headers['content-type'] = type.replace('\u0000', '');
        return { method: 'POST', path: base.path, headers, body, note: `${base.route}: content-type ${JSON.stringify(type)}` };
      });
    },
  },
  {
    family: 'structural',
    name: 'empty bodies',
    count: 200,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, withPoke(i));
        const variant = i % 5;
        if (variant === 0) return { method: 'POST', path: base.path, note: `${base.route}: no body, no content-type` };
        if (variant === 1) return { method: 'POST', path: base.path, headers: JSON_HEADERS, body: '', note: `${base.route}: empty JSON body` };
        if (variant === 2) return g.post(base, rng.pick([' ', '\n', '\r\n\t ', '\u00a0']), 'whitespace body');
        if (variant === 3) return { method: 'POST', path: base.path, headers: { 'content-type': 'text/plain' }, body: '', note: `${base.route}: empty text body` };
        return { method: 'POST', path: base.path, headers: { ...JSON_HEADERS, 'content-length': '0' }, note: `${base.route}: content-length 0` };
      });
    },
  },
  {
    family: 'structural',
    name: 'bodies that are not objects',
    count: 300,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, withPoke(i));
        const envelope = JSON.stringify(base.body);
        const bodies = ['[]', `[${envelope}]`, `[${envelope},${envelope}]`, '"pacts.create"', '42', '-1', '1e400', '0', 'true', 'false', 'null', '"\\ud800"', '[[[]]]', '{}', `"${envelope.replaceAll('"', '\\"')}"`];
        return g.post(base, bodies[i % bodies.length]!, 'not an object');
      });
    },
  },
  {
    family: 'structural',
    name: 'huge, negative, float numbers',
    count: 600,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, routeAt(i));
        const targets = numberPaths(base.body);
        const path = rng.pick(targets.length ? targets : [['stateNonce']]);
        const token = rng.pick(NUMBER_TOKENS);
        const m = marker();
        const body = clone(base.body);
        setAt(body, path, m);
        const resign = rng.chance(0.6);
        return g.post(base, g.renderSigned(body, [{ marker: m, raw: token }], resign ? base.key : undefined), `${pathText(path)} = ${token.slice(0, 40)}${resign ? ' (signed)' : ''}`);
      });
    },
  },
  {
    family: 'structural',
    name: 'missing, extra and wrong-typed fields',
    count: 1200,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, routeAt(i));
        const body = clone(base.body);
        const kind = i % 3;
        const k = Math.floor(i / 3 / BODY_ROUTES.length); // every path in turn, per route and kind
        let note: string;
        if (kind === 0) {
          const path = nth(paths(body).filter((p) => p[p.length - 1] !== 'sig'), k);
          deleteAt(body, path);
          note = `missing ${pathText(path)}`;
        } else if (kind === 1) {
          const path = nth(objectPaths(body), k);
          const name = rng.pick(['extra', '__proto__', 'constructor', 'prototype', '', 'sig', 'Action', 'call ', 'toString', 'hasOwnProperty', '$ref', 'a'.repeat(300)]);
          const target: any = path.length ? getAt(body, path) : body;
          Object.defineProperty(target, name, { value: rng.pick(WRONG_TYPED), enumerable: true, configurable: true, writable: true });
          note = `extra field ${JSON.stringify(name.slice(0, 20))} in ${pathText(path)}`;
        } else {
          const path = nth(paths(body), k);
          const value = rng.pick(WRONG_TYPED);
          setAt(body, path, value);
          note = `${pathText(path)} = ${JSON.stringify(value)}`;
        }
        const resign = rng.chance(0.8) && !note.startsWith('missing sig');
        const signedBody = resign && 'sig' in body ? g.resign(body, base.key) : body;
        return g.post(base, JSON.stringify(signedBody), `${note}${resign ? ' (signed)' : ''}`);
      });
    },
  },
  {
    family: 'structural',
    name: 'deep nesting (50 and 2000 levels)',
    count: 288,
    *generate(g, count, rng) {
      // where the nesting goes, per route: the whole body, or a path in the envelope (free-form places first)
      const places: Record<BodyRoute | 'poke', (Path | 'body')[]> = {
        create: ['body', ['call', 'terms', 'deep'], ['call', 'evaluator', 'deep'], ['call', 'terms', 'spec'], ['deep']],
        fund: ['body', ['call', 'deep'], ['call'], ['deep']],
        withdraw: ['body', ['call', 'deep'], ['call'], ['deep']],
        propose: ['body', ['call', 'evidence', 0, 'note'], ['call', 'distribution'], ['call', 'deep'], ['deep']],
        cosign: ['body', ['call', 'deep'], ['call'], ['deep']],
        object: ['body', ['call', 'reason'], ['call', 'deep'], ['deep']],
        cancel: ['body', ['call', 'sigs'], ['call', 'deep'], ['deep']],
        verdict: ['body', ['reason'], ['distribution'], ['deep']],
        poke: ['body'],
      };
      const combos: [BodyRoute | 'poke', Path | 'body'][] = [];
      for (const [route, list] of Object.entries(places)) for (const place of list) combos.push([route as BodyRoute | 'poke', place]);
      // the free-form objects of a spec are the one place a signed body may nest deeply past the schema
      const freeForm: Path[] = [['call', 'terms', 'deep'], ['call', 'evaluator', 'deep'], ['call', 'terms', 'spec', 'x']];
      yield* times(count, (i) => {
        const third = Math.floor(i / 3);
        const [route, place] = i % 3 === 2 ? (['create', freeForm[third % freeForm.length]!] as const) : combos[Math.floor((i - third) / 4) % combos.length]!;
        const depth = i % 2 === 0 ? 50 : 2000;
        const kind = Math.floor(i / 2) % 2 === 0 ? 'array' : 'object';
        const base = g.inertBase(rng, route);
        if (place === 'body') {
          const deepest = i % 8 === 7 ? 10_000 : depth; // text built by hand: JSON.stringify cannot write this deep
          return g.post(base, nested(deepest, kind), `${deepest} levels of ${kind}s as the whole body`);
        }
        const body = clone(base.body);
        if (i % 3 === 2 && third % 4 === 3) {
          // past any recursion limit: written by hand, and no signature can be computed for it either
          const m = marker();
          setAt(body, place, m);
          const deepKind = Math.floor(third / 4) % 2 === 0 ? 'array' : 'object';
          return g.post(base, render(body, [{ marker: m, raw: nested(10_000, deepKind) }]), `10000 levels of ${deepKind}s at ${pathText(place)}`);
        }
        setAt(body, place, nestedValue(depth, kind));
        const signedBody = 'sig' in body ? g.resign(body, base.key) : body;
        return g.post(base, JSON.stringify(signedBody), `${depth} levels of ${kind}s at ${pathText(place)} (signed)`);
      });
    },
  },
  {
    family: 'structural',
    name: 'lone surrogates in string values and keys',
    count: 600,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, routeAt(i));
        const body = clone(base.body);
        const m = marker();
        const surrogate = rng.pick(LONE_SURROGATES);
        let note: string;
        if (i % 3 === 2 && base.route === 'create' && i % 2 === 0) {
          // a new key in the free-form objects of a spec, which no schema looks into
          const place = rng.pick([['call', 'terms'], ['call', 'evaluator']]);
          setAt(body, [...place, m], 'x');
          note = `new key "${surrogate}" in ${pathText(place)}`;
        } else if (i % 3 === 2) {
          const path = nth(keyPaths(body), Math.floor(i / 24));
          renameKey(body, path, m);
          note = `key ${pathText(path)} -> "${surrogate}"`;
        } else {
          const path = nth(stringPaths(body), Math.floor(i / 24) * 2 + (i % 3));
          const original = String(getAt(body, path));
          setAt(body, path, m);
          const raw = JSON.stringify(rng.chance(0.5) ? original : '').slice(0, -1) + surrogate + '"';
          note = `${pathText(path)} with "${surrogate}"`;
          return g.post(base, render(body, [{ marker: m, raw }]), note);
        }
        return g.post(base, render(body, [{ marker: m, raw: `"${surrogate}"` }]), note);
      });
    },
  },
  {
    family: 'structural',
    name: 'invalid UTF-8 bytes',
    count: 300,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, routeAt(i));
        const body = clone(base.body);
        const m = marker();
        const bad = Buffer.from(rng.pick(BAD_UTF8));
        const asKey = i % 4 === 3;
        const path = nth(asKey ? keyPaths(body) : stringPaths(body), Math.floor(i / 8));
        const original = String(asKey ? path[path.length - 1] : getAt(body, path));
        if (asKey) renameKey(body, path, m);
        else setAt(body, path, m);
        const cut = rng.int(0, original.length);
        const raw = Buffer.concat([Buffer.from(JSON.stringify(original.slice(0, cut)).slice(0, -1)), bad, Buffer.from(JSON.stringify(original.slice(cut)).slice(1))]);
        const resign = i % 2 === 0;
        return g.post(base, g.renderSigned(body, [{ marker: m, raw }], resign ? base.key : undefined), `${asKey ? 'key' : 'value'} ${pathText(path)} with bytes ${bad.toString('hex')}${resign ? ' (signed as decoded)' : ''}`);
      });
    },
  },
  {
    family: 'structural',
    name: 'NUL bytes',
    count: 300,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, routeAt(i));
        const variant = i % 4;
        if (variant === 3) {
          const text = JSON.stringify(base.body);
          const at = rng.int(0, text.length);
          return g.post(base, Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from([0]), Buffer.from(text.slice(at))]), 'a raw NUL byte in the JSON text');
        }
        const body = clone(base.body);
        if (variant === 2) {
          const path = nth(keyPaths(body), Math.floor(i / 8));
          renameKey(body, path, `${String(path[path.length - 1])}\u0000`);
          return g.post(base, JSON.stringify(g.resign(body, base.key)), `key ${pathText(path)} + \\u0000 (signed)`);
        }
        const path = nth(stringPaths(body), Math.floor(i / 8));
        const value = String(getAt(body, path));
        if (variant === 1) {
          const m = marker();
          setAt(body, path, m);
          return g.post(base, render(body, [{ marker: m, raw: Buffer.concat([Buffer.from(`"${value.slice(0, 3)}`), Buffer.from([0]), Buffer.from(`${value.slice(3)}"`)]) }]), `raw NUL byte inside ${pathText(path)}`);
        }
        setAt(body, path, rng.pick([`${value}\u0000`, `\u0000${value}`, '\u0000', `${value.slice(0, 5)}\u0000${value.slice(5)}`]));
        return g.post(base, JSON.stringify(g.resign(body, base.key)), `\\u0000 in ${pathText(path)} (signed)`);
      });
    },
  },
  {
    family: 'structural',
    name: 'very long strings',
    count: 120,
    *generate(g, count, rng) {
      const lengths = [4_097, 65_537, 100_000, 200_000];
      yield* times(count, (i) => {
        const base = g.inertBase(rng, routeAt(i));
        const body = clone(base.body);
        const length = lengths[i % lengths.length]!;
        const filler = rng.pick(['a', '9', 'é', '\u{1F600}', '"', '\\']);
        let long = filler.repeat(Math.ceil(length / filler.length)).slice(0, length);
        if (/[\ud800-\udbff]$/.test(long)) long = `${long.slice(0, -1)}a`; // never half an emoji: that is the lone-surrogate class
        let note: string;
        if (i % 5 === 4) {
          const path = rng.pick(keyPaths(body));
          renameKey(body, path, long.slice(0, 50_000).replace(/[\ud800-\udbff]$/, 'a'));
          note = `key ${pathText(path)} of 50000 characters`;
        } else {
          const path = rng.pick(stringPaths(body));
          setAt(body, path, long);
          note = `${pathText(path)} of ${length} × ${JSON.stringify(filler)}`;
        }
        return g.post(base, JSON.stringify(g.resign(body, base.key)), `${note} (signed)`);
      });
    },
  },
  {
    family: 'structural',
    name: 'oversized and near-limit bodies',
    count: 64,
    transportErrorsAllowed: true,
    *generate(g, count, rng) {
      const LIMIT = 256 * 1024;
      const sizes = [LIMIT + 1, LIMIT + 100, 300_000, 1024 * 1024, 3 * 1024 * 1024, LIMIT, LIMIT - 1, LIMIT - 200];
      yield* times(count, (i) => {
        const base = g.inertBase(rng, withPoke(i));
        const size = sizes[i % sizes.length]!;
        const fresh = { fresh: size > LIMIT };
        const text = JSON.stringify(base.body);
        if (Math.floor(i / sizes.length) % 2 === 0 || size - text.length < 50) {
          // padded with JSON whitespace: the same call, just bigger
          return g.post(base, ' '.repeat(Math.max(0, size - text.length)) + text, `${size} bytes (whitespace padding)`, fresh);
        }
        const body = clone(base.body);
        const slot = base.route === 'create' ? ['call', 'terms', 'pad'] : ['pad'];
        setAt(body, slot, '');
        const bare = JSON.stringify(body).length;
        setAt(body, slot, 'p'.repeat(Math.max(0, size - bare - 140)));
        const signed = 'sig' in body ? g.resign(body, base.key) : body;
        const out = JSON.stringify(signed);
        return g.post(base, out + ' '.repeat(Math.max(0, size - out.length)), `${size} bytes (a long field, signed)`, fresh);
      });
    },
  },
  {
    family: 'structural',
    name: 'many array items and keys',
    count: 150,
    *generate(g, count, rng) {
      const counts = [65, 101, 1_000, 8_000];
      yield* times(count, (i) => {
        const base = g.inertBase(rng, routeAt(i));
        const body = clone(base.body);
        const n = counts[i % counts.length]!;
        const arrays = paths(body).filter((p) => Array.isArray(getAt(body, p)));
        let note: string;
        if (arrays.length && i % 3 !== 2) {
          const path = rng.pick(arrays);
          const items = getAt(body, path) as unknown[];
          const item = items[0] ?? 1;
          setAt(body, path, Array.from({ length: n }, (_, k) => (rng.chance(0.5) ? item : typeof item === 'object' && item !== null ? { ...item, k } : k)));
          note = `${pathText(path)} with ${n} items`;
        } else {
          const path = rng.pick(objectPaths(body));
          const target: any = path.length ? getAt(body, path) : body;
          for (let k = 0; k < n; k++) target[`k${k}`] = k;
          note = `${n} extra keys in ${pathText(path)}`;
        }
        return g.post(base, JSON.stringify(g.resign(body, base.key)), `${note} (signed)`);
      });
    },
  },
];

// ====================================================================================================
// signatures

function smallOrderParty(hex: string): string {
  return `ed25519:${bs58.encode(Buffer.from(hex, 'hex'))}`;
}

const signatures: FuzzClass[] = [
  {
    family: 'signatures',
    name: 'wrong, all-zero and malformed sigs',
    count: 600,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = i % 2 === 0 ? rng.pick(g.liveBases()) : g.inertBase(rng, routeAt(i));
        const valid = String(base.body.sig);
        const other = g.world.envelope(rng.pick(g.world.outsiders), 'pacts.cosign', '', 0, {});
        const sigs: [string, string][] = [
          ['random hex', rng.hex(128)],
          ['all zero', '0'.repeat(128)],
          ['all f', 'f'.repeat(128)],
          ['one hex digit changed', valid.slice(0, 127) + (valid[127] === '0' ? '1' : '0')],
          ['R changed', (valid[0] === 'a' ? 'b' : 'a') + valid.slice(1)],
          ['S = L (non-canonical S)', valid.slice(0, 64) + 'edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010'],
          ['uppercase', valid.toUpperCase()],
          ['126 chars', valid.slice(0, 126)],
          ['130 chars', `${valid}00`],
          ['empty', ''],
          ['not hex', 'zz'.repeat(64)],
          ['base64 of the sig', Buffer.from(valid, 'hex').toString('base64')],
          ['0x prefix', `0x${valid.slice(2)}`],
          ['the signature of another call', String(other.sig)],
          ['a number', '42'],
        ];
        const [name, sig] = sigs[i % sigs.length]!;
        const body = { ...base.body, sig };
        return g.post(base, JSON.stringify(body), `sig: ${name}`, { expect: signatureRefused });
      });
    },
  },
  {
    family: 'signatures',
    name: 'signed by another key than signer',
    count: 400,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = nth(g.liveBases(), i);
        const f = base.fixture;
        const candidates = [g.world.evaluator, ...g.world.outsiders, ...(f ? [f.seller, f.buyer] : [])].filter((k) => k.party !== base.body.signer);
        const key = rng.pick(candidates);
        const body = g.resign(base.body, key);
        return g.post(base, JSON.stringify(body), `signer ${String(base.body.signer).slice(0, 16)}… but signed by another key`, { expect: signatureRefused });
      });
    },
  },
  {
    family: 'signatures',
    name: 'small-order keys with constant signatures',
    count: 300,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const [keyName, keyHex] = SMALL_ORDER_KEYS[i % SMALL_ORDER_KEYS.length]!;
        const party = smallOrderParty(keyHex);
        const [sigName, sig] = SMALL_ORDER_SIGS[Math.floor(i / SMALL_ORDER_KEYS.length) % SMALL_ORDER_SIGS.length]!;
        const route = routeAt(Math.floor(i / 3));
        const w = g.world;
        const f = rng.pick(g.fixtures());
        let body: Body;
        let path: string;
        if (route === 'create') {
          // a stale issuedAt: a forged signature that is accepted shows as 422 instead of 401, and creates nothing
          const spec = g.richSpec(w.newKey(), w.newKey());
          if (rng.chance(0.5)) spec.parties[0].party = party;
          body = { action: 'pacts.create', call: spec, pactId: '', stateNonce: 0, issuedAt: w.now() - 2 * HOUR, signer: party, sig };
          path = '/pacts';
        } else if (route === 'verdict') {
          body = { pactId: f.id, inputHash: f.pact.inputHash ?? 'ab'.repeat(32), distribution: [{ party: f.seller.party, bp: 10000 }], feeFrom: 'split', issuedAt: w.now(), signer: party, sig };
          path = g.pathOf('verdict', f);
        } else if (route === 'cancel' && i % 2 === 0) {
          // a party submits properly; the other approval comes from a small-order key
          const nonce = f.pact.stateNonce;
          const expiresAt = w.now() + HOUR;
          const submitter = f.seller;
          const call = { expiresAt, sigs: [w.approval(submitter, f.id, nonce + 1, expiresAt), { signer: party, sig }] };
          body = w.envelope(submitter, 'pacts.cancel', f.id, nonce + 1, call);
          path = g.pathOf('cancel', f);
        } else {
          const nonce = f.pact.stateNonce;
          body = { action: ACTION[route], call: g.callFor(route, f, nonce), pactId: f.id, stateNonce: nonce, issuedAt: w.now(), signer: party, sig };
          path = g.pathOf(route, f);
        }
        const headers = { ...JSON_HEADERS, ...(route === 'fund' ? { 'x-payment': MOCK_PROOF } : {}) };
        return { method: 'POST', path, headers, body: JSON.stringify(body), note: `${route}: ${keyName} key, sig ${sigName}`, expect: signatureRefused };
      });
    },
  },
  {
    family: 'signatures',
    name: 'small-order keys: fresh creates',
    count: 24,
    bypassGuard: true,
    *generate(g, count, rng) {
      // What a correct server refuses with 401 and an accepting one turns into new pacts: anyone can
      // "sign" as the identity key, so these creates are forgeries.
      yield* times(count, (i) => {
        const w = g.world;
        const [keyName, keyHex] = i % 3 === 0 ? SMALL_ORDER_KEYS[0]! : SMALL_ORDER_KEYS[i % SMALL_ORDER_KEYS.length]!;
        const party = smallOrderParty(keyHex);
        const spec = g.richSpec(w.newKey(), w.newKey());
        if (i % 2 === 0) {
          spec.parties[0].party = party;
          spec.proposer = party;
        }
        const body = { action: 'pacts.create', call: spec, pactId: '', stateNonce: 0, issuedAt: w.now() - rng.int(0, 1000), signer: party, sig: SMALL_ORDER_SIGS[0]![1] };
        return { method: 'POST', path: '/pacts', headers: JSON_HEADERS, body: JSON.stringify(body), note: `create: ${keyName} key, sig ${SMALL_ORDER_SIGS[0]![0]}, issuedAt now${i % 2 === 0 ? ', the key itself a party' : ''}`, expect: signatureRefused };
      });
    },
  },
  {
    family: 'signatures',
    name: 'envelopes changed after signing',
    count: 600,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = i % 4 === 3 ? g.inertBase(rng, routeAt(i)) : rng.pick(g.liveBases());
        const body = clone(base.body);
        const unsigned = clone(signedPart(body as Body & { sig: string }));
        const kind = i % 3;
        let note: string;
        if (kind === 0) {
          // one top-level field
          const key = rng.pick(Object.keys(unsigned));
          body[key] = differentValue(rng, body[key], g);
          note = `${key} changed`;
        } else {
          const leaves = paths(unsigned).filter((p) => p.length > 1 && (getAt(unsigned, p) === null || typeof getAt(unsigned, p) !== 'object'));
          if (leaves.length === 0 || kind === 2) {
            const target: any = base.route === 'verdict' ? body : body.call;
            if (target && typeof target === 'object' && Object.keys(target).length && rng.chance(0.5)) {
              const key = rng.pick(Object.keys(target).filter((k) => k !== 'sig'));
              delete target[key];
              note = `${base.route === 'verdict' ? '' : 'call.'}${key} removed`;
            } else {
              body.call = { ...(body.call ?? {}), [rng.pick(['railAddress', 'note', 'extra'])]: 'x' };
              note = 'a field added to call';
            }
          } else {
            const path = rng.pick(leaves);
            setAt(body, path, differentValue(rng, getAt(body, path), g));
            note = `${pathText(path)} changed`;
          }
        }
        if (sameJcs(signedPart(body as Body & { sig: string }), unsigned) && body.sig === base.body.sig) return undefined; // the change changed nothing
        return g.post(base, JSON.stringify(body), `${note} after signing`, { expect: signatureRefused });
      });
    },
  },
  {
    family: 'signatures',
    name: 'signed for another action or pact',
    count: 500,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        // calls that would apply (or did, during setup) on their own route, sent to another one
        const sources: { path: string; body: Body }[] = [...g.liveBases(), ...g.world.applied];
        const source = nth(sources, i);
        const f = rng.pick(g.fixtures());
        const route = rng.pick(BODY_ROUTES);
        const path = g.pathOf(route, f);
        if (path === source.path) return undefined; // its own route: not this class
        const headers = { ...JSON_HEADERS, ...(route === 'fund' ? { 'x-payment': MOCK_PROOF } : {}) };
        const what = source.body.action ?? 'verdict';
        return { method: 'POST', path, headers, body: JSON.stringify(source.body), note: `${what} for ${String(source.body.pactId || '(create)').slice(0, 12)}… sent to ${route} of ${f.label}`, expect: signatureRefused };
      });
    },
  },
];

// ====================================================================================================
// replays

function replayBody(rng: Rng, body: Body): { text: string; note: string } {
  const variant = rng.int(0, 3);
  if (variant === 0) return { text: JSON.stringify(body), note: 'exact' };
  if (variant === 1) return { text: JSON.stringify(body, null, rng.pick([1, 2, '\t'])), note: 'pretty-printed' };
  // the same JCS: keys in another order
  const shuffle = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(shuffle);
    if (value && typeof value === 'object') {
      const entries = Object.entries(value).map(([k, v]) => [k, shuffle(v)] as const);
      for (let k = entries.length - 1; k > 0; k--) {
        const j = rng.int(0, k);
        [entries[k], entries[j]] = [entries[j]!, entries[k]!];
      }
      return Object.fromEntries(entries);
    }
    return value;
  };
  return { text: JSON.stringify(shuffle(body)), note: 'keys reordered' };
}

const replays: FuzzClass[] = [
  {
    family: 'replays',
    name: 'replays of applied calls',
    count: 600,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const applied = g.world.applied[i % g.world.applied.length]!;
        const fixture = g.fixtures().find((f) => f.id === applied.pactId)!;
        const { text, note } = replayBody(rng, applied.body);
        const proofs = [applied.headers['x-payment'], MOCK_PROOF, Buffer.from(MOCK_PROOF).toString('base64'), undefined];
        const proof = applied.path.endsWith('/fund') ? rng.pick(proofs) : undefined;
        const headers: Record<string, string> = { ...JSON_HEADERS, ...(proof ? { 'x-payment': proof } : {}) };
        const expect =
          applied.kind === 'create'
            ? (status: number, answer: string) => {
                if (status !== 200) return `a replayed create answers 200 with the same pact, got ${status} ${answer.slice(0, 200)}`;
                const pact = JSON.parse(answer).pact;
                if (pact?.id !== applied.pactId) return `a replayed create answered another pact: ${pact?.id}`;
                if (pact.stateNonce !== fixture.pact.stateNonce || pact.state !== fixture.pact.state) return `a replayed create answered ${pact.state}@${pact.stateNonce}, the pact is ${fixture.pact.state}@${fixture.pact.stateNonce}`;
                return undefined;
              }
            : expectOneOf('a replayed call that already applied is refused', 409);
        return { method: 'POST', path: applied.path, headers, body: text, note: `replay of ${applied.label} (${note}${proof ? ', with X-PAYMENT' : ''})`, expect, allow2xx: applied.kind === 'create' };
      });
    },
  },
  {
    family: 'replays',
    name: 'bursts of the same replay in parallel',
    count: 224,
    *generate(g, count) {
      yield* times(count, (i) => {
        const applied = g.world.applied[Math.floor(i / 16) % g.world.applied.length]!;
        const expect = applied.kind === 'create' ? expectOneOf('a replayed create', 200) : expectOneOf('a replayed call that already applied is refused', 409);
        return { method: 'POST', path: applied.path, headers: { ...JSON_HEADERS, ...applied.headers }, body: JSON.stringify(applied.body), note: `burst of 16 × ${applied.label}`, expect, allow2xx: applied.kind === 'create' };
      });
    },
  },
];

// ====================================================================================================
// headers

const headerFamily: FuzzClass[] = [
  {
    family: 'headers',
    name: 'X-PAYMENT garbage',
    count: 400,
    *generate(g, count, rng) {
      const notMock = ['{"scheme":"x"}', '{}', '{"scheme":"MOCK"}', '{"scheme":null}', '{"scheme":["mock"]}', '{"Scheme":"mock"}', '[{"scheme":"mock"}]', '{"scheme":"mock "}', '{"scheme":"m\\u006fck2"}'];
      const garbage = () =>
        rng.pick([
          'scheme=mock', '{"scheme": "mock"', '"mock"', 'null', '42', 'true', '[]', '', ' ', '=', '====', 'e30', 'e30=', '{{{{', '\t',
          Buffer.from('{"scheme":').toString('base64'), Buffer.from(rng.bytes(48)).toString('base64'), rng.bytes(32).toString('hex'),
          Buffer.from(rng.pick(notMock)).toString('base64'), Buffer.from(rng.pick(notMock)).toString('base64url'), rng.pick(notMock),
          `{"scheme":"x","pad":"${'a'.repeat(rng.pick([8_000, 15_000]))}"}`, 'A'.repeat(rng.pick([4_000, 12_000])), '%7B%22scheme%22%3A%22mock%22%7D',
          `{"scheme":"x","n":${'['.repeat(3000)}${']'.repeat(3000)}}`, `{"scheme":"x","s":"\\ud800"}`, Buffer.from('{"scheme":"\\ud800"}').toString('base64'),
        ]);
      yield* times(count, (i) => {
        const w = g.world;
        let base: Base;
        if (i % 2 === 0) {
          // the one party of each CREATED pact that could fund now, at the current nonce: only proofs that are not mock proofs
          const f = w.byLabel(rng.pick(['created-unfunded', 'created-seller-funded']));
          const key = f.label === 'created-unfunded' && rng.chance(0.5) ? f.seller : f.buyer;
          base = { route: 'fund', fixture: f, path: g.pathOf('fund', f), body: w.envelope(key, 'pacts.fund', f.id, f.pact.stateNonce, {}), key };
        } else {
          base = g.inertBase(rng, 'fund');
        }
        const headers: Record<string, string | string[]> = { ...JSON_HEADERS };
        let note: string;
        if (i % 7 === 6) {
          headers['x-payment'] = [garbage(), garbage()];
          note = 'two X-PAYMENT headers';
        } else {
          headers['x-payment'] = i % 2 === 1 && rng.chance(0.3) ? rng.pick([MOCK_PROOF, Buffer.from(MOCK_PROOF).toString('base64')]) : garbage();
          note = `X-PAYMENT ${JSON.stringify(String(headers['x-payment']).slice(0, 40))}`;
        }
        return { method: 'POST', path: base.path, headers, body: JSON.stringify(base.body), note: `fund (${base.fixture?.label}): ${note}` };
      });
    },
  },
  {
    family: 'headers',
    name: 'huge and many headers',
    count: 150,
    transportErrorsAllowed: true,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const route = withPoke(i);
        const base = g.inertBase(rng, route);
        const variant = i % 6;
        const headers: Record<string, string> = { ...JSON_HEADERS };
        let note: string;
        if (variant < 4) {
          const size = [8_000, 15_000, 17_000, 70_000][variant]!;
          const name = rng.pick(['x-payment', 'x-junk', 'cookie', 'authorization', 'user-agent', 'accept']);
          headers[name] = rng.string(size);
          note = `${name} of ${size} bytes`;
        } else {
          const n = variant === 4 ? 200 : 3_000;
          for (let k = 0; k < n; k++) headers[`x-h${k}`] = 'v';
          note = `${n} headers`;
        }
        const get = i % 3 === 0;
        return get
          ? { method: 'GET', path: rng.pick([`/pacts/${base.fixture?.id ?? 'x'}`, '/pacts?limit=5', '/health']), headers, note: `GET with ${note}`, fresh: true }
          : { method: 'POST', path: base.path, headers, body: JSON.stringify(base.body), note: `${route} with ${note}`, fresh: true };
      });
    },
  },
  {
    family: 'headers',
    name: 'odd transfer headers',
    count: 250,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const base = g.inertBase(rng, withPoke(i));
        const text = JSON.stringify(base.body);
        const variants: [string, Record<string, string>, Buffer | string][] = [
          ['content-encoding gzip on a plain body', { ...JSON_HEADERS, 'content-encoding': 'gzip' }, text],
          ['content-encoding br', { ...JSON_HEADERS, 'content-encoding': 'br' }, text],
          ['content-encoding garbage', { ...JSON_HEADERS, 'content-encoding': 'x-rot13' }, text],
          ['content-encoding identity', { ...JSON_HEADERS, 'content-encoding': 'identity' }, text],
          ['transfer-encoding chunked', { ...JSON_HEADERS, 'transfer-encoding': 'chunked' }, text],
          ['expect 100-continue', { ...JSON_HEADERS, expect: '100-continue' }, text],
          ['expect garbage', { ...JSON_HEADERS, expect: 'teapot' }, text],
          ['accept garbage', { ...JSON_HEADERS, accept: 'x/y;q=zz, */*;q=-1' }, text],
          ['accept-encoding garbage', { ...JSON_HEADERS, 'accept-encoding': 'gzip;q=2, br;q=x' }, text],
          ['content-type with utf-16 body', { 'content-type': 'application/json; charset=utf-16le' }, Buffer.from(text, 'utf16le')],
          ['utf-8 BOM', JSON_HEADERS, Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)])],
          ['host garbage', { ...JSON_HEADERS, host: 'evil.example:99999' }, text],
          ['x-forwarded-for garbage', { ...JSON_HEADERS, 'x-forwarded-for': '999.1.1.1, ::ffff:zz, ' + 'a'.repeat(500) }, text],
          ['authorization garbage', { ...JSON_HEADERS, authorization: 'Payment ' + rng.hex(200) }, text],
          ['connection close', { ...JSON_HEADERS, connection: 'close' }, text],
          ['content-type json, body form-encoded', JSON_HEADERS, 'action=pacts.fund&sig=00'],
        ];
        const [note, headers, body] = variants[i % variants.length]!;
        return { method: 'POST', path: base.path, headers, body, note: `${base.route}: ${note}`, fresh: 'connection' in headers || 'expect' in headers };
      });
    },
  },
];

// ====================================================================================================
// query strings

const queries: FuzzClass[] = [
  {
    family: 'queries',
    name: 'GET /pacts with garbage queries',
    count: 600,
    *generate(g, count, rng) {
      const f = () => rng.pick(g.fixtures());
      const values: Record<string, () => string> = {
        party: () => rng.pick([f().seller.party, f().buyer.party, IDENTITY_PARTY, 'alice', 'ed25519:', 'ed25519:0OIl', `ed25519:${'1'.repeat(44)}`, `ed25519:${'z'.repeat(45)}`, '%00', '%ed%a0%80', '']),
        state: () => rng.pick(['CREATED', 'ACTIVE', 'SETTLED', 'active', 'BOGUS', '', 'CREATED,ACTIVE', '__proto__', '%00', 'CANCELLED ']),
        groupId: () => rng.pick(['g-fuzz', '', 'x'.repeat(129), 'x'.repeat(5000), '%F0%9F%98%80', '%ff', '%ED%A0%80', '%00', '../../', "'; DROP TABLE pacts; --"]),
        since: () => rng.pick(['0', '-1', '1', '9999999999999999', '99999999999999999999', '1e3', '-0', '00', '0x10', ' 1', `${Date.now()}`, 'NaN', 'Infinity', '']),
        limit: () => rng.pick(['1', '200', '201', '999', '1000', '0', '-1', '00', '010', '2.5', '1e2', '1e100', '999999999999999999999', 'ten', '', ' 5', '5 ', '0x10', '%35', '+5']),
      };
      const keys = Object.keys(values);
      const junkKeys = ['__proto__', 'constructor', 'hasOwnProperty', 'toString', 'limit[]', 'a[b]', '', 'LIMIT', 'colour', 'party%00', '%ff', '%', '&', '=', 'x'.repeat(3000)];
      yield* times(count, (i) => {
        const parts: string[] = [];
        const n = rng.int(1, 6);
        for (let k = 0; k < n; k++) {
          const r = rng.float();
          if (r < 0.6) {
            const key = rng.pick(keys);
            parts.push(`${key}=${values[key]!()}`);
          } else if (r < 0.8) {
            parts.push(`${rng.pick(junkKeys)}=${rng.pick(['1', '', 'x', '%zz', '%', '%%', '%2', rng.string(rng.int(1, 40))])}`);
          } else if (r < 0.9) {
            const key = rng.pick(keys);
            parts.push(`${key}=${values[key]!()}`, `${key}=${values[key]!()}`); // repeated
          } else {
            parts.push(rng.pick(['', '&', '=', '==', 'limit', 'limit=', '=5', '?', '#', ';limit=5']));
          }
        }
        if (i % 50 === 49) parts.push(`groupId=${'g'.repeat(12_000)}`);
        const query = parts.join(rng.chance(0.9) ? '&' : rng.pick([';', '&&', '&amp;']));
        return { method: 'GET', path: `/pacts?${query}`.replaceAll('#', '%23').replaceAll(' ', '%20'), note: 'list query', allow2xx: true };
      });
    },
  },
  {
    family: 'queries',
    name: 'query strings on other routes',
    count: 200,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const qs = rng.pick(['?', '?a=1', '?limit=999999', '?__proto__[x]=1', '?%zz', `?x=${'y'.repeat(8000)}`, '?a=1&a=2&a=3', '?party=x&party=y', '?;', '?%00=%00']);
        const f = rng.pick(g.fixtures());
        const variant = i % 4;
        if (variant === 0) return { method: 'GET', path: `/pacts/${f.id}${qs}`, note: 'GET a pact with a query', allow2xx: true };
        if (variant === 1) return { method: 'GET', path: `/health${qs}`, note: 'health with a query', allow2xx: true };
        if (variant === 2) return { method: 'POST', path: `/pacts/${f.id}/poke${qs}`, note: 'poke with a query', allow2xx: true };
        const base = g.inertBase(rng, routeAt(i));
        return { method: 'POST', path: `${base.path}${qs}`, headers: JSON_HEADERS, body: JSON.stringify(base.body), note: `${base.route} with a query` };
      });
    },
  },
];

// ====================================================================================================
// routes and methods

const KNOWN_PATHS = (g: Gen, rng: Rng): string[] => {
  const f = rng.pick(g.fixtures());
  return ['/pacts', `/pacts/${f.id}`, ...[...SIGNED_ROUTES, 'verdict', 'poke'].map((r) => `/pacts/${f.id}/${r}`), '/health', '/'];
};

const routes: FuzzClass[] = [
  {
    family: 'routes',
    name: 'unknown routes and odd paths',
    count: 400,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const f = rng.pick(g.fixtures());
        const candidates = [
          `/pacts/${f.id}/${rng.pick(['steal', 'blobs', 'FUND', 'Fund', 'fund/', 'fund/x', 'poke/', 'verdict/1', '', '.', '..', '%2e%2e', 'fund%00', 'fund;x', 'fund%20'])}`,
          `/pacts//${rng.pick(SIGNED_ROUTES)}`, `/pacts/${f.id}//fund`, `//pacts/${f.id}`, `/PACTS/${f.id}`, `/pacts/${f.id.toUpperCase()}`, `/pacts/${f.id}x`,
          `/pacts/${f.id.slice(0, -1)}`, `/pacts/p_${'0'.repeat(32)}`, `/pacts/${'x'.repeat(rng.pick([100, 5_000]))}`, `/pacts/%ff`, `/pacts/%ED%A0%80`, `/pacts/%zz/fund`,
          `/pacts/%00`, `/pacts/..%2F..%2Fhealth`, '/../../etc/passwd', '/pacts/../health', '/%2e%2e/%2e%2e/', '/health/', '/health/x', '/HEALTH', '/health%00',
          '/v0/events', '/v0/pull', '/offers', '/offers/watch?timeoutMs=50', '/access/request', '/rails/mock/address', `/pacts/${f.id}/blobs`, '/dl/abc', '/install', '/agents.md',
          '/llms.txt', '/pact-cli.tgz', '/favicon.ico', '/.env', '/%F0%9F%98%80', `/${rng.string(rng.int(1, 60), 'abc/%.-_~')}`, '/*', '/pacts/*', '/pacts/:id',
          `/pacts/${f.id}?`, `/pacts/${f.id}/fund#x`.replace('#', '%23'), '/pacts;/health', '/pacts%2Fx',
        ];
        // (A watch is a long poll: asked without a timeout it rightly waits 30 s, longer than the fuzzer does.)
        const path = rng.pick(candidates);
        const method = i % 2 === 0 ? 'GET' : 'POST';
        if (method === 'GET') return { method, path, note: 'odd path', allow2xx: true };
        const base = g.inertBase(rng, routeAt(i));
        return { method, path, headers: JSON_HEADERS, body: JSON.stringify(base.body), note: `odd path with an inert ${base.route} body`, allow2xx: true };
      });
    },
  },
  {
    family: 'routes',
    name: 'every method on every route',
    count: 400,
    *generate(g, count, rng) {
      const methods = ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'TRACE', 'POST', 'PROPFIND', 'MKCOL', 'LOCK', 'PURGE', 'SEARCH', 'REPORT', 'QUERY', 'COPY', 'MOVE', 'FOO', 'get', 'M-SEARCH'];
      yield* times(count, (i) => {
        const method = methods[i % methods.length]!;
        const path = rng.pick(KNOWN_PATHS(g, rng));
        const withBody = method !== 'GET' && method !== 'HEAD' && rng.chance(0.6);
        if (!withBody) return { method, path, note: 'no body', allow2xx: true };
        const base = g.inertBase(rng, routeAt(i));
        return { method, path, headers: JSON_HEADERS, body: JSON.stringify(base.body), note: `inert ${base.route} body`, allow2xx: method !== 'POST' || /\/poke$|^\/health|^\/$/.test(path) };
      });
    },
  },
  {
    family: 'routes',
    name: 'poke every pact, with and without bodies',
    count: 200,
    *generate(g, count, rng) {
      yield* times(count, (i) => {
        const fixtures = g.fixtures();
        const known = i % 4 !== 3;
        const f = fixtures[i % fixtures.length]!;
        const id = known ? f.id : rng.pick([`p_${rng.hex(32)}`, 'nope', 'p_', `p_${rng.hex(31)}`, f.id.toUpperCase()]);
        const bodies: [string, Record<string, string> | undefined, string | undefined][] = [
          ['no body', undefined, undefined],
          ['{}', JSON_HEADERS, '{}'],
          ['null', JSON_HEADERS, 'null'],
          ['an inert envelope', JSON_HEADERS, JSON.stringify(g.inertBase(rng, 'cosign').body)],
          ['empty JSON', JSON_HEADERS, ''],
          ['garbage JSON', JSON_HEADERS, '{"a":'],
          ['text', { 'content-type': 'text/plain' }, 'poke!'],
        ];
        const [note, headers, body] = bodies[i % bodies.length]!;
        const badBody = note === 'garbage JSON';
        const expect = (status: number, answer: string) => {
          if (!known) return [404, 400, 415].includes(status) ? undefined : `poke of an unknown pact: expected 404, got ${status}`;
          if (badBody) return status === 400 ? undefined : `poke with a broken body: expected 400, got ${status}`;
          if (status === 415 || status === 400) return undefined;
          if (status !== 200) return `poke with nothing due: expected 200, got ${status} ${answer.slice(0, 200)}`;
          const pact = JSON.parse(answer).pact;
          return pact?.stateNonce === f.pact.stateNonce && pact?.state === f.pact.state ? undefined : `poke changed the pact: ${pact?.state}@${pact?.stateNonce}`;
        };
        return { method: 'POST', path: `/pacts/${id}/poke`, headers, body, note: `poke ${known ? f.label : id} with ${note}`, expect, allow2xx: true };
      });
    },
  },
  {
    family: 'routes',
    name: 'malformed HTTP on raw sockets',
    count: 100,
    transportErrorsAllowed: true,
    *generate(g, count, rng) {
      const f = () => rng.pick(g.fixtures());
      const body = () => JSON.stringify(g.inertBase(rng, 'cosign').body);
      const reqs: [string, () => string | Buffer][] = [
        ['invalid method "FO O"', () => 'FO O / HTTP/1.1\r\nHost: x\r\n\r\n'],
        ['HTTP/9.9', () => 'GET / HTTP/9.9\r\nHost: x\r\n\r\n'],
        ['HTTP/0.9 request line', () => 'GET /health\r\n\r\n'],
        ['header without colon', () => 'GET /health HTTP/1.1\r\nHost x\r\n\r\n'],
        ['space before colon', () => 'GET /health HTTP/1.1\r\nHost : x\r\n\r\n'],
        ['NUL in a header value', () => 'GET /health HTTP/1.1\r\nHost: x\r\nX: a\u0000b\r\n\r\n'],
        ['obs-fold header', () => 'GET /health HTTP/1.1\r\nHost: x\r\nX: a\r\n folded\r\n\r\n'],
        ['two different Content-Length', () => { const b = body(); return `POST /pacts/${f().id}/cosign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${b.length}\r\nContent-Length: ${b.length + 5}\r\n\r\n${b}`; }],
        ['Content-Length and chunked', () => { const b = body(); return `POST /pacts/${f().id}/cosign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n${b.length.toString(16)}\r\n${b}\r\n0\r\n\r\n`; }],
        ['bad chunk size', () => `POST /pacts/${f().id}/cosign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n`],
        ['chunk size over 2^64', () => `POST /pacts/${f().id}/cosign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n1ffffffffffffffff\r\n{}\r\n0\r\n\r\n`],
        ['Transfer-Encoding gzip, chunked', () => `POST /pacts/${f().id}/cosign HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: gzip, chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`],
        ['bare LF line ends', () => 'GET /health HTTP/1.1\nHost: x\n\n'],
        ['request line of 20000 bytes', () => `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`],
        ['empty lines before the request line', () => '\r\n\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\n\r\n'],
        ['random bytes', () => rng.bytes(rng.int(1, 300))],
        ['absolute-form URL', () => 'GET http://evil.example/health HTTP/1.1\r\nHost: x\r\n\r\n'],
        ['HTTP/1.0 without Host', () => 'GET /health HTTP/1.0\r\n\r\n'],
        ['CONNECT', () => 'CONNECT 127.0.0.1:22 HTTP/1.1\r\nHost: x\r\n\r\n'],
        ['HTTP/2 preface', () => 'PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'],
        ['Content-Length -1', () => 'GET /health HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n'],
        ['Content-Length 10^20', () => 'POST /pacts HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 99999999999999999999\r\n\r\n{}'],
        ['two pipelined requests', () => 'GET /health HTTP/1.1\r\nHost: x\r\n\r\nGET /health HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'],
        ['Upgrade: websocket', () => `GET /pacts/${f().id} HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n`],
        ['bytes 0xff 0xfe and a UTF-8 surrogate in the path', () => Buffer.concat([Buffer.from('GET /pacts/'), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80]), Buffer.from(' HTTP/1.1\r\nHost: x\r\n\r\n')])],
      ];
      yield* times(count, (i) => {
        const [name, make] = reqs[i % reqs.length]!;
        const raw = make();
        return { method: 'RAW', path: '', raw: Buffer.isBuffer(raw) ? raw : Buffer.from(raw, 'latin1'), note: `raw: ${name}`, allow2xx: true };
      });
    },
  },
];

export const FAMILIES: { name: string; classes: FuzzClass[] }[] = [
  { name: 'structural', classes: structural },
  { name: 'signatures', classes: signatures },
  { name: 'replays', classes: replays },
  { name: 'headers', classes: headerFamily },
  { name: 'queries', classes: queries },
  { name: 'routes', classes: routes },
];
