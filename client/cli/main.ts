import { parseArgs } from 'node:util';
import { VERSION } from '../../protocol/version.js';
import { PactClient, PactRequestError } from '../pact-client.js';
import type { Command, Context } from './command.js';
import { accessCommands } from './commands/access.js';
import { eventCommands } from './commands/events.js';
import { evidenceCommands } from './commands/evidence.js';
import { identityCommands } from './commands/identity.js';
import { offerCommands } from './commands/offers.js';
import { pactCommands } from './commands/pacts.js';
import { AgentHome, DEFAULT_SERVER } from './home.js';
import { CliError, prettyJson, printable, refusal, usageError } from './output.js';
import type { Io } from './terminal.js';

const COMMANDS: Command[] = [...identityCommands, ...pactCommands, ...evidenceCommands, ...offerCommands, ...accessCommands, ...eventCommands];
const GLOBAL_OPTIONS = { server: { type: 'string' } } as const;

/**
 * Runs one `pact` command line and answers its exit code: 0 only on success, 1 when the server refused or the
 * work failed, 2 for a command line that does not parse. Results go to stdout as JSON, errors to stderr.
 */
export async function runCli(argv: string[], env: NodeJS.ProcessEnv, io: Io): Promise<number> {
  try {
    const [leading, words] = leadingServer(argv);
    if (words[0] === '--version' || words[0] === '-v') return void io.stdout.write(`${VERSION}\n`), 0;
    if (words.length === 0 || ['help', '--help', '-h'].includes(words[0]!)) return void io.stdout.write(helpText()), 0;
    const [command, rest] = commandOf(words);
    if (rest.includes('--help') || rest.includes('-h')) return void io.stdout.write(`pact ${command.name} ${command.usage}\n  ${command.summary}\n`), 0;
    await command.run(contextOf(command, [...leading, ...rest], env, io));
    return 0;
  } catch (error) {
    return reported(error, io);
  }
}

/** `pact --server <url> get …` as well as `pact get … --server <url>`: a leading --server is the command's. */
function leadingServer(argv: string[]): [string[], string[]] {
  if (argv[0] === '--server') return [argv.slice(0, 2), argv.slice(2)];
  if (argv[0]?.startsWith('--server=')) return [argv.slice(0, 1), argv.slice(1)];
  return [[], argv];
}

function commandOf(argv: string[]): [Command, string[]] {
  const group = COMMANDS.find((command) => command.name === `${argv[0]} ${argv[1]}`);
  if (group) return [group, argv.slice(2)];
  const single = COMMANDS.find((command) => command.name === argv[0]);
  if (single) return [single, argv.slice(1)];
  throw usageError(`unknown command "${argv.slice(0, 2).join(' ')}" (pact help lists them)`);
}

function contextOf(command: Command, args: string[], env: NodeJS.ProcessEnv, io: Io): Context {
  const { values, positionals } = parsed(command, args);
  const home = new AgentHome(env);
  const server = serverUrl(stringValue(values.server) ?? (env.PACT_SERVER || undefined) ?? home.savedServer() ?? DEFAULT_SERVER);
  return {
    positionals,
    values,
    env,
    io,
    home,
    server,
    client: new PactClient(server),
    key: () => home.key(),
    print: (value) => void io.stdout.write(prettyJson(value)),
  };
}

function parsed(command: Command, args: string[]) {
  try {
    return parseArgs({ args, options: { ...GLOBAL_OPTIONS, ...command.options }, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError(`${(error as Error).message}\nusage: pact ${command.name} ${command.usage}`);
  }
}

const stringValue = (value: unknown) => (typeof value === 'string' ? value : undefined);

/** The server's base URL, without a trailing slash; anything but http(s) is a usage error. */
function serverUrl(text: string): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw usageError(`"${text}" is not a server URL (like http://127.0.0.1:8402)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw usageError(`the server URL must be http or https, not ${url.protocol}`);
  return text.replace(/\/+$/, '');
}

function reported(error: unknown, io: Io): number {
  if (error instanceof PactRequestError) return reported(refusal(error.result, 'pacts'), io);
  if (error instanceof CliError) {
    io.stderr.write(printable(`pact: ${error.message}\n${error.details === undefined ? '' : prettyJson(error.details)}`));
    return error.exitCode;
  }
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  const why = cause ? `cannot reach the server (${cause.code ?? cause.message})` : error instanceof Error ? error.message : String(error);
  io.stderr.write(printable(`pact: ${why}\n`));
  return 1;
}

function helpText(): string {
  const width = Math.max(...COMMANDS.map((command) => command.name.length));
  const lines = COMMANDS.map((command) => `  ${command.name.padEnd(width)}  ${command.summary}\n  ${' '.repeat(width)}  pact ${command.name} ${command.usage}`);
  return [
    `pact ${VERSION}: escrow for agreements between AI agents`,
    '',
    'Every command takes --server <url> (else $PACT_SERVER, else the server of `pact init`) and --help.',
    '`pact --version` prints the version. Exit codes: 0 success, 1 refused or failed, 2 a command line that does not parse.',
    'The identity lives in $PACT_HOME/agent.json (~/.pact by default). Results are JSON on stdout.',
    '',
    ...lines,
    '',
  ].join('\n');
}
