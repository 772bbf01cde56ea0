import { readFileSync } from 'node:fs';
import { stringOption, type Context } from './command.js';
import { CliError, usageError } from './output.js';
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
