import { readFileSync } from 'node:fs';
import type { HttpResult } from '../pact-client.js';
import { stringOption, type Command, type Context } from './command.js';
import { answered, CliError, usageError } from './output.js';
import { readStdin } from './terminal.js';

/** The bytes of `--file`, or of stdin when it is absent or `-`. */
export async function inputBytes(context: Context, file = stringOption(context, 'file')): Promise<Buffer> {
  if (file === undefined || file === '-') return readStdin(context.io);
  try {
    return readFileSync(file);
  } catch (error) {
    throw new CliError(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`);
  }
}

/** The JSON of `--file` or stdin. */
export async function inputJson<T = any>(context: Context): Promise<T> {
  const text = (await inputBytes(context)).toString('utf8');
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new CliError(`the input is not JSON (${stringOption(context, 'file') ?? 'stdin'})`);
  }
}

/** JSON values one after another (a JSON array, or objects separated by whitespace or newlines). */
export function jsonValues(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  try {
    const value: unknown = JSON.parse(trimmed);
    return Array.isArray(value) ? value : [value];
  } catch {
    return trimmed.split(/\n\s*(?=\{)/).map((part) => {
      try {
        return JSON.parse(part) as unknown;
      } catch {
        throw new CliError('the input is neither a JSON array nor JSON objects one per line');
      }
    });
  }
}

/** A time given as milliseconds since 1970 or as an ISO 8601 date. */
export function timeOption(context: Context, name: string): number | undefined {
  const text = stringOption(context, name);
  if (text === undefined) return undefined;
  const at = /^[0-9]+$/.test(text) ? Number(text) : Date.parse(text);
  if (!Number.isSafeInteger(at)) throw usageError(`--${name} takes milliseconds since 1970 or an ISO 8601 time, not "${text}"`);
  return at;
}

/**
 * A command that signs and sends the JSON of `--file` or stdin, and prints the answer: `what` names the input
 * in the usage line, `capability` the server's feature in a "does not offer" refusal.
 */
export function jsonInputCommand<T>(
  name: string,
  what: string,
  summary: string,
  capability: string,
  send: (context: Context, input: T) => Promise<HttpResult>,
): Command {
  return {
    name,
    usage: `[--file <${what}.json>]  (the ${what} on stdin without --file)`,
    summary,
    options: { file: { type: 'string' } },
    async run(context) {
      context.print(answered(await send(context, await inputJson<T>(context)), capability));
    },
  };
}
