import type { ErrorBody, HttpResult } from '../pact-client.js';

/** A failure the user can act on: printed as `pact: <message>` with exit code 1 (2 for a usage error). */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    readonly details?: unknown,
  ) {
    super(message);
  }
}

export const usageError = (message: string) => new CliError(message, 2);

/** The body of a 2xx answer; any other answer becomes a CliError that names its code and status. */
export function answered<T>(result: HttpResult<T>, capability: string): T {
  if (result.status >= 200 && result.status < 300) return result.body;
  throw refusal(result, capability);
}

export function refusal(result: HttpResult, capability: string): CliError {
  const body = result.body as ErrorBody | string | undefined;
  if (result.status === 404 && isUnknownRoute(body)) return new CliError(`this server does not offer ${capability}`);
  if (typeof body !== 'object' || body === null) return new CliError(`the server answered ${result.status}${body ? `: ${String(body).slice(0, 200)}` : ''}`);
  const { error, message, ...details } = body;
  const retry = result.headers.get('retry-after');
  return new CliError(`${error} (${result.status}): ${message ?? ''}${retry ? ` (retry after ${retry} s)` : ''}`, 1, Object.keys(details).length ? details : undefined);
}

/** A 404 about the route itself (ours says `no route …`, a bare fastify `Route … not found`), not about a pact. */
function isUnknownRoute(body: ErrorBody | string | undefined): boolean {
  if (typeof body !== 'object' || body === null) return true;
  return /^(no route |Route .* not found)/.test(body.message ?? '') || body.error === 'Not Found';
}

export const prettyJson = (value: unknown) => `${JSON.stringify(value, null, 2)}\n`;

/** Text for a terminal without the control characters a hostile server could send (escape sequences); newlines stay. */
export const printable = (text: string) => text.replace(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/g, '');
