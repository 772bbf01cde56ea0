import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { signed, type KeyPair } from '../../protocol/sign.js';
import type { RailAddressBook } from '../address-book.js';
import type { WalletEndpoint } from './wallet-client.js';

const TIMEOUT_MS = 10_000;

async function post(url: string, body: unknown, internalToken: string): Promise<any> {
  // The internal token keeps these two calls out of the per-address rate limits.
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${internalToken}` };
  const response = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body), signal: AbortSignal.timeout(TIMEOUT_MS) });
  if (!response.ok) throw new Error(`${url} answered ${response.status}: ${await response.text()}`);
  return response.json();
}

/**
 * Arbitration fees on the credit rail go to the server's own party, so it needs a wallet bound there like any payee:
 * without one a verdict's fee would hold its payer's hold. Once per server (the binding is for good), this opens a
 * wallet on the wallet service, claims it and binds it; the node that binds it keeps its access token in
 * `tokenFile` for the operator (`GET /v1/me` with it shows the fees).
 */
export async function ensureFeeWallet(settings: { wallet: WalletEndpoint; serverKey: KeyPair; addressBook: RailAddressBook; tokenFile: string; now: () => number }): Promise<string> {
  const { wallet: endpoint, serverKey, addressBook, tokenFile, now } = settings;
  const bound = await addressBook.addressOf('credit', serverKey.party);
  if (bound) return bound.address;
  const { wallet, pairing } = await post(`${endpoint.url()}/v1/wallets`, { label: 'arbitration fees' }, endpoint.internalToken);
  const { accessToken } = await post(`${endpoint.url()}/v1/pairings/claim`, { token: pairing.token }, endpoint.internalToken);
  const pending = `${tokenFile}.pending`; // kept if the process dies between the binding and the rename
  mkdirSync(dirname(tokenFile), { recursive: true });
  writeFileSync(pending, `${accessToken}\n`, { mode: 0o600 });
  const call = signed({ action: 'rails.bindAddress' as const, call: { rail: 'credit', address: wallet.id }, pactId: '', stateNonce: 0, issuedAt: now(), signer: serverKey.party }, serverKey);
  const binding = await addressBook.bind({ rail: 'credit', party: serverKey.party, address: wallet.id, at: now(), call });
  if ('conflict' in binding) {
    rmSync(pending); // another node bound one first: its token is there
    return binding.conflict.address;
  }
  renameSync(pending, tokenFile);
  return binding.bound.address;
}
