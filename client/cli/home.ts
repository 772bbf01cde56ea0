import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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

  /** A new key, written 0600 in a 0700 directory; the secret is never printed. */
  create(server: string): AgentFile {
    const key = generateKeyPair();
    const agent: AgentFile = { privkey: bytesToHex(key.secretKey), partyId: key.party, server };
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
    writeFileSync(this.file, `${JSON.stringify(agent, null, 2)}\n`, { mode: 0o600 });
    chmodSync(this.file, 0o600);
    return agent;
  }
}
