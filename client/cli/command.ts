import type { ParseArgsConfig } from 'node:util';
import type { PactClient } from '../pact-client.js';
import type { KeyPair } from '../../protocol/sign.js';
import type { AgentHome } from './home.js';
import { usageError } from './output.js';
import type { Io } from './terminal.js';

export type Values = Record<string, string | boolean | string[] | undefined>;

/** What a command runs with: the parsed arguments, the agent's home and key, a client of its server, the streams. */
export interface Context {
  positionals: string[];
  values: Values;
  env: NodeJS.ProcessEnv;
  io: Io;
  home: AgentHome;
  server: string;
  client: PactClient;
  key(): KeyPair;
  /** Pretty JSON on stdout. */
  print(value: unknown): void;
}

export interface Command {
  /** `get`, or `offers search` for a command of a group. */
  name: string;
  /** The arguments after the name, as `pact help` shows them. */
  usage: string;
  summary: string;
  options?: NonNullable<ParseArgsConfig['options']>;
  run(context: Context): Promise<void>;
}

/** The `index`th positional argument, named `name` in the usage error when missing. */
export function argument(context: Context, index: number, name: string): string {
  const value = context.positionals[index];
  if (value === undefined || value === '') throw usageError(`missing <${name}>`);
  return value;
}

export function stringOption(context: Context, name: string): string | undefined {
  const value = context.values[name];
  return typeof value === 'string' ? value : undefined;
}

export function integerOption(context: Context, name: string): number | undefined {
  const text = stringOption(context, name);
  if (text === undefined) return undefined;
  if (!/^[0-9]+$/.test(text)) throw usageError(`--${name} takes a whole number, not "${text}"`);
  return Number(text);
}

/**
 * The options given, under the names the server takes: `{ group: 'groupId' }` reads `--group` into `groupId`;
 * those named in `integers` must be whole numbers.
 */
export function givenOptions(context: Context, names: Record<string, string>, integers: readonly string[] = []): Record<string, string | number> {
  const given: Record<string, string | number> = {};
  for (const [option, field] of Object.entries(names)) {
    const value = integers.includes(option) ? integerOption(context, option) : stringOption(context, option);
    if (value !== undefined && value !== '') given[field] = value;
  }
  return given;
}

export const listOption = (context: Context, name: string): string[] => {
  const value = context.values[name];
  return Array.isArray(value) ? value : typeof value === 'string' ? [value] : [];
};
