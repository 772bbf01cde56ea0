import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { VERSION } from '../../protocol/version.js';

// The CLI as a new user gets it (`curl <server>/install | sh` into a prefix) and identities that run it.

/** Where the CLI was installed: `dir` is the users' HOME and holds their PACT_HOMEs; `pact` the installed binary. */
export interface InstalledCli {
  dir: string;
  pact: string;
}

/** Runs the server's installer as its landing page says, into `<dir>/prefix`, and checks what it printed. */
export function installCli(serverUrl: string, dir: string): InstalledCli {
  const prefix = join(dir, 'prefix');
  const install = spawnSync('sh', ['-c', `curl -fsSL ${serverUrl}/install | sh`], {
    encoding: 'utf8',
    env: { PATH: process.env.PATH, HOME: dir, PACT_PREFIX: prefix },
    timeout: 120_000,
  });
  assert.is(install.status, 0, `install: ${install.stdout}\n${install.stderr}`);
  assert.match(install.stdout, `pact ${VERSION} is installed`);
  assert.match(install.stdout, `pact init --server ${serverUrl}`);
  return { dir, pact: join(prefix, 'bin', 'pact') };
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  json: any;
}

/** One CLI identity: its own PACT_HOME, running the installed `pact`. */
export class CliAgent {
  readonly home: string;
  /** More environment for its runs (PACT_SERVER, say). */
  env: Record<string, string> = {};
  party = '';

  constructor(
    readonly context: InstalledCli,
    name: string,
  ) {
    this.home = join(context.dir, name);
  }

  /** Runs `pact` (asynchronously: a blocked event loop would miss the server closing idle connections). */
  async run(args: string[], input = ''): Promise<Run> {
    const child = spawn(this.context.pact, args, { env: { PATH: process.env.PATH, HOME: this.context.dir, PACT_HOME: this.home, ...this.env } });
    const [stdout, stderr] = [collect(child.stdout), collect(child.stderr)];
    child.stdin.end(input);
    const [code] = (await once(child, 'close')) as [number | null];
    const run = { code, stdout: await stdout, stderr: await stderr };
    let json: any;
    try {
      json = JSON.parse(run.stdout);
    } catch {
      json = undefined;
    }
    return { ...run, json };
  }

  /** Runs `pact` on a pseudo-terminal (util-linux `script`): what a person at a terminal sees, stdout and stderr mixed. */
  async inTerminal(args: string[], typed?: { after: string; keys: string }): Promise<Run> {
    const command = [this.context.pact, ...args].map((arg) => `'${arg.replaceAll("'", `'\\''`)}'`).join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { env: { PATH: process.env.PATH, HOME: this.context.dir, PACT_HOME: this.home, TERM: 'dumb' } });
    let seen = '';
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      if (typed && seen.includes(typed.after)) {
        child.stdin.end(typed.keys);
        typed = undefined;
      }
    });
    const output = collect(child.stdout);
    if (!typed) child.stdin.end();
    const [code] = (await once(child, 'close')) as [number | null];
    return { code, stdout: await output, stderr: '', json: undefined };
  }

  /** Runs and asserts the exit code (and, for a refusal, that stderr says something and stdout nothing). */
  async expect(code: number, args: string[], input = ''): Promise<Run> {
    const run = await this.run(args, input);
    assert.is(run.code, code, `pact ${args.join(' ')} exited ${run.code}; stdout: ${run.stdout}\nstderr: ${run.stderr}`);
    if (code !== 0) {
      assert.ok(run.stderr.startsWith('pact: '), `refusal of pact ${args.join(' ')} explains itself: ${run.stderr}`);
      assert.is(run.stdout, '', `refusal of pact ${args.join(' ')} prints nothing on stdout`);
    }
    return run;
  }
}

async function collect(stream: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stream) text += chunk.toString();
  return text;
}
