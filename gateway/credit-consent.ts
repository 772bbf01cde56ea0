import type { FastifyReply, FastifyRequest } from 'fastify';
import { parsePaymentHeader } from '../actors/admission.js';
import { pactError, type PactError } from '../protocol/errors.js';
import { creditProofWallet } from '../rails/credit/credit-rail.js';
import { sendError } from './errors.js';
import { paymentOf } from './payment-header.js';

/** Whether a wallet bearer opens a wallet: the wallet service's word (rails/credit/wallet-client.ts). */
export interface WalletOpener {
  opens(walletId: string, bearer: string): Promise<boolean>;
}

const BEARER = /^bearer\s+(\S+)$/i;

/**
 * Credit moves only with its wallet's consent: the request that binds a wallet to a party, and each paid fund on
 * the credit rail, carry `Authorization: Bearer wk_…` of that very wallet (else 403). The token is checked
 * here, at the edge, and goes no further: the pact's host sees the signed call and the wallet's id only.
 */
export async function walletConsentProblem(wallets: WalletOpener | undefined, walletId: string, authorization: string | undefined): Promise<PactError | undefined> {
  if (!wallets) return pactError('rail_not_available', 'this server does not offer the credit rail');
  const bearer = BEARER.exec(authorization ?? '')?.[1];
  if (!bearer) return pactError('forbidden', `prove control of ${walletId} with its Authorization: Bearer wk_…`);
  try {
    return (await wallets.opens(walletId, bearer)) ? undefined : pactError('forbidden', `that bearer does not open ${walletId}`);
  } catch {
    return pactError('unavailable', 'the wallet service could not say who holds that wallet now; retry', { retryAfter: 1 });
  }
}

/** The fund route's check: a payment proof of the credit rail, in whichever header, needs its wallet's bearer beside it. */
export function creditFundConsent(wallets: WalletOpener | undefined) {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const payment = paymentOf(request.headers);
    const proof = payment === undefined ? undefined : parsePaymentHeader(payment);
    const walletId = creditProofWallet(proof);
    if (walletId === undefined) return;
    const problem = await walletConsentProblem(wallets, walletId, request.headers.authorization);
    if (problem) return sendError(reply, problem);
  };
}
