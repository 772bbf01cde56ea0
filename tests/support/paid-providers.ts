import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decodePaymentSignatureHeader, encodePaymentRequiredHeader, encodePaymentResponseHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentPayloadV1, PaymentRequirements, PaymentRequirementsV1 } from '@x402/core/types';
import { Challenge } from 'mppx';
import { Methods as MppMethods } from 'mppx/evm';
import { evm as mppEvm, Mppx as MppServer } from 'mppx/server';
import { formatUnits, parseEther, type Address, type Hex } from 'viem';
import { testUsdcAbi } from '../../contracts/test-usdc-artifact.js';
import type { EvmChain } from './evm-chain.js';
import { localWalletClient } from './evm/local-clients.js';
import { testWallet } from './evm/test-keys.js';
import { selfHostedFacilitator } from './evm/x402-payments.js';

/**
 * What a provider does with its next call: answer (taking its payment); fail before asking for payment; refuse the
 * payment it is sent; take the payment and fail, or take it and never answer; never answer without taking it; ask
 * ten times its listed price; answer without taking the payment; answer the unpaid call with 2 MB. And attacks:
 * an x402 v1 entry whose `amount` is low and `maxAmountRequired` high; an mpp challenge valid for ten years; the
 * mpp challenge it gave last time, again.
 */
export type Behaviour =
  | 'answer'
  | 'fail-unpaid'
  | 'refuse-payment'
  | 'take-and-fail'
  | 'take-and-hang'
  | 'hang'
  | 'overcharge'
  | 'answer-untaken'
  | 'huge-free'
  | 'v1-split-amount'
  | 'long-challenge'
  | 'same-challenge';

export type PaidRail = 'x402' | 'x402v1' | 'mpp';
/** The paid providers and a plain HTTP one (priced by the catalog, nothing paid on the wire). */
export type ProviderKind = PaidRail | 'http';

/** Local providers on the test chain: an x402 (v2 and v1), an mpp and a plain HTTP one, each a word counter, and the registry sources that list the paid ones. */
export interface PaidProviders {
  url: string;
  /** The provider's own address, where its payments go. */
  payTo: Address;
  /** Token units (6 decimals, so micro-USD) a paid call costs. */
  price: bigint;
  /** micro-USD the catalog charges for the plain HTTP provider. */
  plainPrice: bigint;
  resourceOf(kind: ProviderKind): string;
  /** The behaviour of the next call to `kind` (afterwards: answer). */
  next(kind: ProviderKind, behaviour: Behaviour): void;
  /** Paid requests each rail received (a payment header on them). */
  paidCalls: Record<PaidRail, number>;
  /** WALLET_REGISTRY_SOURCES listing these providers. */
  registrySources: string;
  /** Writes a WALLET_CATALOG_FILE with one capability per kind (`test.words-<kind>`), returning its path. */
  writeCatalog(dir: string): string;
  stop(): Promise<void>;
}

const PRICE = 2_500n;
/** Behaviours of the paid request, kept past the unpaid one. */
const PAID_LEG = new Set<Behaviour>(['refuse-payment', 'take-and-fail', 'take-and-hang', 'hang', 'answer-untaken']);
const KINDS: ProviderKind[] = ['x402', 'x402v1', 'mpp', 'http'];
const PLAIN_PRICE = 3_000n;

/** The answer of every provider here: the words of the text, counted. */
const answerFor = (input: { text?: unknown }) => ({ words: String(input.text ?? '').split(/\s+/).filter(Boolean).length });

export async function startPaidProviders(chain: EvmChain): Promise<PaidProviders> {
  const provider = testWallet('paid provider');
  // The provider's settler pays the gas of the settlements (x402's facilitator, mpp's settle); the payer pays none.
  const settler = testWallet('provider settler');
  await chain.escrowClient.waitForTransactionReceipt({ hash: await chain.escrowClient.sendTransaction({ to: settler.address, value: parseEther('10') }) });
  const settlerClient = localWalletClient(chain.escrowClient.chain, settler.account);
  const facilitator = selfHostedFacilitator(chain, { address: settler.address, client: settlerClient });

  const behaviours = new Map<ProviderKind, Behaviour>();
  const take = (rail: ProviderKind): Behaviour => {
    const behaviour = behaviours.get(rail) ?? 'answer';
    behaviours.delete(rail);
    return behaviour;
  };
  const paidCalls: Record<PaidRail, number> = { x402: 0, x402v1: 0, mpp: 0 };
  const hanging = new Set<ServerResponse>();
  let lastChallenge: string | undefined;
  const secretKey = 'a paid provider secret key, at least 32 bytes long';
  /** A genuine challenge of this provider's, expiring in ten years. */
  const longChallenge = () =>
    Challenge.serialize(
      Challenge.fromMethod(MppMethods.charge, {
        secretKey,
        realm: 'provider.test',
        request: { amount: formatUnits(PRICE, chain.token.decimals), chainId: chain.chainId, currency: chain.token.address, decimals: chain.token.decimals, recipient: provider.address },
        expires: new Date(Date.now() + 10 * 365 * 86_400_000).toISOString(),
      }),
    );
  let url = '';
  const resourceOf = (kind: ProviderKind) => `${url}/${kind}/words`;

  const requirementV2 = (amount: bigint): PaymentRequirements => ({
    scheme: 'exact',
    network: chain.network,
    asset: chain.token.address,
    amount: amount.toString(),
    payTo: provider.address,
    maxTimeoutSeconds: 600,
    extra: { name: chain.token.name, version: chain.token.version },
  });
  const requirementV1 = (amount: bigint): PaymentRequirementsV1 => ({
    scheme: 'exact',
    network: chain.networkV1 as never,
    asset: chain.token.address,
    maxAmountRequired: amount.toString(),
    payTo: provider.address,
    resource: resourceOf('x402v1'),
    description: 'counts words',
    mimeType: 'application/json',
    outputSchema: {},
    maxTimeoutSeconds: 600,
    extra: { name: chain.token.name, version: chain.token.version },
  });

  // One settler account: its transactions go one at a time, so concurrent calls never race for a nonce.
  let settling: Promise<unknown> = Promise.resolve();
  const oneAtATime = <T>(work: () => Promise<T>): Promise<T> => {
    const done = settling.then(work);
    settling = done.catch(() => undefined);
    return done;
  };
  const settleWithAuthorization = async (payload: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string; signature: string }) => {
    const hash = await settlerClient.writeContract({
      address: chain.token.address,
      abi: testUsdcAbi,
      functionName: 'transferWithAuthorization',
      args: [payload.from as Address, payload.to as Address, BigInt(payload.value), BigInt(payload.validAfter), BigInt(payload.validBefore), payload.nonce as Hex, payload.signature as Hex],
    });
    const receipt = await settlerClient.waitForTransactionReceipt({ hash });
    if (receipt.status !== 'success') throw new Error(`transferWithAuthorization reverted: ${hash}`);
    return { reference: hash };
  };
  const mppx = MppServer.create({
    realm: 'provider.test',
    secretKey,
    methods: [
      mppEvm.charge({
        currency: chain.token.address,
        chainId: chain.chainId,
        decimals: chain.token.decimals,
        recipient: provider.address,
        authorization: { name: chain.token.name, version: chain.token.version },
        settle: ({ payload }) => oneAtATime(() => settleWithAuthorization(payload as never)),
      }),
    ],
  });

  async function x402(rail: 'x402' | 'x402v1', req: IncomingMessage, res: ServerResponse, input: { text?: unknown }) {
    const v2 = rail === 'x402';
    const proof = req.headers[v2 ? 'payment-signature' : 'x-payment'];
    if (typeof proof !== 'string') {
      const behaviour = take(rail);
      if (behaviour === 'fail-unpaid') return send(res, 503, { error: 'the provider is down' });
      if (behaviour === 'huge-free') return send(res, 200, { padding: 'x'.repeat(2_000_000) });
      if (PAID_LEG.has(behaviour)) behaviours.set(rail, behaviour); // for the paid call
      const amount = behaviour === 'overcharge' ? PRICE * 10n : PRICE;
      if (behaviour === 'v1-split-amount') return send(res, 402, { x402Version: 1, error: 'payment required', accepts: [{ ...requirementV1(PRICE * 400_000n), amount: '1' }] });
      if (!v2) return send(res, 402, { x402Version: 1, error: 'payment required', accepts: [requirementV1(amount)] });
      const required = { x402Version: 2, error: 'payment required', resource: { url: resourceOf(rail), description: 'counts words', mimeType: 'application/json' }, accepts: [requirementV2(amount)] };
      return send(res, 402, {}, { 'payment-required': encodePaymentRequiredHeader(required as never) });
    }
    paidCalls[rail]++;
    const behaviour = take(rail);
    if (behaviour === 'hang') return void hanging.add(res);
    if (behaviour === 'refuse-payment') return send(res, 402, { error: 'payment refused' });
    const payload = v2 ? (decodePaymentSignatureHeader(proof) as PaymentPayload) : (JSON.parse(Buffer.from(proof, 'base64').toString()) as PaymentPayloadV1);
    const requirement = v2 ? requirementV2(PRICE) : requirementV1(PRICE);
    const verified = await facilitator.verify(payload as never, requirement as never);
    if (!verified.isValid) return send(res, 402, { error: verified.invalidReason });
    if (behaviour === 'answer-untaken') return send(res, 200, answerFor(input));
    const settled = await oneAtATime(() => facilitator.settle(payload as never, requirement as never));
    if (!settled.success) return send(res, 402, { error: settled.errorReason });
    if (behaviour === 'take-and-hang') return void hanging.add(res);
    if (behaviour === 'take-and-fail') return send(res, 500, { error: 'the provider broke after taking the payment' });
    const settledHeader: Record<string, string> = v2 ? { 'payment-response': encodePaymentResponseHeader(settled) } : { 'x-payment-response': Buffer.from(JSON.stringify(settled)).toString('base64') };
    return send(res, 200, answerFor(input), settledHeader);
  }

  async function mpp(req: IncomingMessage, res: ServerResponse, body: string) {
    const paying = typeof req.headers.authorization === 'string';
    const behaviour = take('mpp');
    if (!paying && behaviour === 'fail-unpaid') return send(res, 503, { error: 'the provider is down' });
    if (!paying && PAID_LEG.has(behaviour)) behaviours.set('mpp', behaviour);
    if (!paying && behaviour === 'same-challenge' && lastChallenge) return send(res, 402, {}, { 'www-authenticate': lastChallenge });
    if (!paying && behaviour === 'long-challenge') return send(res, 402, {}, { 'www-authenticate': longChallenge() });
    if (paying) {
      paidCalls.mpp++;
      if (behaviour === 'hang') return void hanging.add(res);
      if (behaviour === 'refuse-payment') return send(res, 402, { error: 'payment refused' });
    }
    const amount = formatUnits(behaviour === 'overcharge' ? PRICE * 10n : PRICE, chain.token.decimals);
    const headers = Object.entries(req.headers).flatMap(([name, value]): [string, string][] => (typeof value === 'string' ? [[name, value]] : []));
    const charged = await mppx.charge({ amount, description: 'counts words' })(new Request(resourceOf('mpp'), { method: 'POST', headers, body }));
    if (charged.status === 402) {
      lastChallenge = charged.challenge.headers.get('www-authenticate') ?? undefined;
      return sendFetch(res, charged.challenge);
    }
    if (behaviour === 'take-and-hang') return void hanging.add(res);
    if (behaviour === 'take-and-fail') return send(res, 500, { error: 'the provider broke after taking the payment' });
    return sendFetch(res, charged.withReceipt(Response.json(answerFor(JSON.parse(body) as { text?: unknown }))));
  }

  const server: Server = createServer(async (req, res) => {
    try {
      const path = new URL(req.url ?? '/', 'http://local').pathname;
      if (req.method === 'GET' && path === '/bazaar') return send(res, 200, bazaar());
      if (req.method === 'GET' && path === '/mpp-directory') return send(res, 200, directory());
      const kind = KINDS.find((k) => path === `/${k}/words`);
      if (!kind) return send(res, 404, { error: 'no such endpoint' });
      if (req.method === 'HEAD') return send(res, kind === 'http' ? 200 : 402, {});
      const body = (await bodyOf(req)) || '{}';
      if (kind === 'http') return take('http') === 'fail-unpaid' ? send(res, 503, { error: 'the provider is down' }) : send(res, 200, answerFor(JSON.parse(body) as { text?: unknown }));
      return kind === 'mpp' ? await mpp(req, res, body) : await x402(kind, req, res, JSON.parse(body) as { text?: unknown });
    } catch (error) {
      if (!res.headersSent) send(res, 500, { error: String(error) });
    }
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const bazaar = () => ({
    source: 'local-bazaar',
    fetchedAt: new Date().toISOString(),
    items: (['x402', 'x402v1'] as const).map((rail) => ({
      resource: resourceOf(rail),
      serviceName: `Word counter (${rail})`,
      description: 'Counts the words of a text',
      accepts: [rail === 'x402' ? requirementV2(PRICE) : requirementV1(PRICE)],
      extensions: { bazaar: { info: { input: { method: 'POST' }, categories: ['text'] } } },
      quality: { calls30d: 10, uniquePayers30d: 3 },
    })),
  });
  const directory = () => ({
    source: 'local-mpp',
    fetchedAt: new Date().toISOString(),
    services: [
      {
        name: 'Word counter (mpp)',
        baseUrl: url,
        categories: ['text'],
        endpoints: [{ path: '/mpp/words', method: 'POST', intent: 'charge', amount: formatUnits(PRICE, chain.token.decimals), decimals: chain.token.decimals, currency: chain.token.address, recipient: provider.address, network: chain.network, description: 'Counts the words of a text' }],
      },
    ],
  });

  return {
    url,
    payTo: provider.address,
    price: PRICE,
    plainPrice: PLAIN_PRICE,
    resourceOf,
    next: (rail, behaviour) => void behaviours.set(rail, behaviour),
    paidCalls,
    registrySources: `x402-bazaar=${url}/bazaar,mpp-directory=${url}/mpp-directory`,
    writeCatalog(dir) {
      const file = join(dir, 'catalog.json');
      const capabilities = KINDS.map((kind) => ({
        id: `test.words-${kind}`,
        name: `Word count (${kind})`,
        description: `Counts the words of a text, paid on ${kind}`,
        category: 'text',
        tags: ['words', 'count', kind],
        inputSchema: { type: 'object', required: ['text'], additionalProperties: false, properties: { text: { type: 'string', maxLength: 1000 } } },
        outputSchema: { type: 'object', properties: { words: { type: 'integer' } } },
        providers: [kind === 'http' ? { rail: 'http', method: 'POST', resource: resourceOf(kind), price: PLAIN_PRICE.toString() } : { rail: kind === 'x402v1' ? 'x402' : kind, method: 'POST', resource: resourceOf(kind) }],
      }));
      writeFileSync(file, JSON.stringify({ capabilities }));
      return file;
    },
    async stop() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((closed) => server.close(() => closed()));
    },
  };
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

async function sendFetch(res: ServerResponse, response: Response): Promise<void> {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  res.end(Buffer.from(await response.arrayBuffer()));
}

async function bodyOf(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
