import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { bytesToHex } from '@noble/hashes/utils.js';
import { generateKeyPair, keyPairFromSeedHex, type KeyPair } from '../../protocol/sign.js';
import { CliError } from './output.js';

export const DEFAULT_SERVER = 'http://localhost:8402';

/** `~/.pact/agent.json`: the agent's key and the server it talks to. */
export interface AgentFile {
  privkey: string;
  partyId: string;
  server: string;
}

/** Where the agent's identity lives: `PACT_HOME`, else `~/.pact`. */
export class AgentHome {
  readonly dir: string;
  readonly file: string;

  constructor(env: NodeJS.ProcessEnv) {
    this.dir = env.PACT_HOME || join(homedir(), '.pact');
    this.file = join(this.dir, 'agent.json');
  }

  exists(): boolean {
    return existsSync(this.file);
  }

  read(): AgentFile | undefined {
    if (!this.exists()) return undefined;
    try {
      const agent = JSON.parse(readFileSync(this.file, 'utf8')) as AgentFile;
      keyPairFromSeedHex(agent.privkey);
      return agent;
    } catch {
      throw new CliError(`${this.file} is not a Pact identity (run \`pact init --force\` to make a new one)`);
    }
  }

  key(): KeyPair {
    const agent = this.read();
    if (!agent) throw new CliError(`no identity yet: run \`pact init\` (looked in ${this.file})`);
    return keyPairFromSeedHex(agent.privkey);
  }

  /** The server `init` recorded, or undefined when there is no readable identity (no error: a flag may name one). */
  savedServer(): string | undefined {
    try {
      return this.read()?.server;
    } catch {
      return undefined;
    }
  }

  /**
   * A new key in a new 0600 file, renamed over any old one, so the secret is never readable by others, not even
   * for a moment. A directory `init` makes is 0700; an existing one is left as its owner set it.
   */
  create(server: string): AgentFile {
    const key = generateKeyPair();
    const agent: AgentFile = { privkey: bytesToHex(key.secretKey), partyId: key.party, server };
    if (!existsSync(this.dir)) mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const fresh = `${this.file}.${process.pid}.new`;
    writeFileSync(fresh, `${JSON.stringify(agent, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
    renameSync(fresh, this.file);
    return agent;
  }
}
