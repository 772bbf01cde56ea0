import { Ajv2020 } from 'ajv/dist/2020.js';
import * as assert from 'uvu/assert';
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

/** Checks that an answer of `method path` (OpenAPI's `{param}` form) fits what the wallet's OpenAPI document says of it. */
export async function documentFits(stack: Stack) {
  const document = (await walletCall(stack, 'GET', '/openapi.json')).body;
  const ajv = new Ajv2020({ strict: false, validateFormats: false });
  return (method: string, path: string, answer: WalletAnswer, status: number) => {
    assert.is(answer.status, status, `${method} ${path}: ${JSON.stringify(answer.body)}`);
    const response = document.paths[path]?.[method.toLowerCase()]?.responses?.[status];
    assert.ok(response, `${method} ${path} answered ${status}, which it does not document`);
    const schema = response.content['application/json'].schema;
    if (status >= 400) assert.ok(schema.properties.error.enum.includes(answer.body.error), `${method} ${path} ${status}: ${answer.body.error} is not documented`);
    const validate = ajv.compile({ ...schema, components: document.components });
    assert.ok(validate(answer.body), `${method} ${path} ${status}: ${ajv.errorsText(validate.errors)}`);
  };
}
