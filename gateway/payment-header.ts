import type { IncomingHttpHeaders } from 'node:http';

/**
 * The payment proof a fund call carries, as sent: `X-PAYMENT` (the spec's name, and x402 v1's), `PAYMENT-SIGNATURE`
 * (x402 v2's), or an `Authorization: Payment …` credential (mpp's). Every check of a proof reads it here, so none
 * can look at one header while the rail is handed another.
 */
export function paymentOf(headers: IncomingHttpHeaders): string | undefined {
  const payment = headers['x-payment'] ?? headers['payment-signature'] ?? paymentCredential(headers.authorization);
  return typeof payment === 'string' ? payment : undefined;
}

/** An `Authorization: Payment …` credential (the mpp rail's proof), as sent; other schemes are not ours. */
const paymentCredential = (authorization: string | undefined) => (authorization && /^Payment\s/i.test(authorization) ? authorization : undefined);
