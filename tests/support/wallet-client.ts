import type { Stack } from './stack.js';

/** An answer of the wallet service: status, the JSON body (or the page's text) and headers. */
export interface WalletAnswer {
  status: number;
  body: any;
  headers: Headers;
}

/** A call to the stack's wallet service: a string body goes as a form (the checkout page's), anything else as JSON. */
export async function walletCall(stack: Stack, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<WalletAnswer> {
  const form = typeof body === 'string';
  const response = await fetch(`${stack.walletUrl}${path}`, {
    method,
    redirect: 'manual',
    headers: body === undefined ? headers : { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json', ...headers },
    body: body === undefined ? undefined : form ? body : JSON.stringify(body),
  });
  const text = await response.text();
  const isJson = (response.headers.get('content-type') ?? '').includes('json');
  return { status: response.status, body: isJson ? JSON.parse(text) : text, headers: response.headers };
}

export const usd = (amount: string | bigint | number) => ({ amount: String(amount), asset: 'USD' });

/** A paired wallet topped up with `funded` micro-USD through a checkout on the mock rail: its id and bearer header. */
export async function pairedWallet(stack: Stack, funded: string): Promise<{ id: string; auth: Record<string, string> }> {
  const { wallet, pairing } = (await walletCall(stack, 'POST', '/v1/wallets')).body;
  const { accessToken } = (await walletCall(stack, 'POST', '/v1/pairings/claim', { token: pairing.token })).body;
  const auth = { authorization: `Bearer ${accessToken}` };
  if (funded !== '0') {
    const { checkout } = (await walletCall(stack, 'POST', '/v1/checkout', { amount: usd(funded) }, auth)).body;
    const paid = await walletCall(stack, 'POST', `${new URL(checkout.url).pathname}/pay`, 'rail=mock');
    if (paid.status !== 200) throw new Error(`the checkout of ${funded} was not paid: ${paid.status}`);
  }
  return { id: wallet.id, auth };
}
