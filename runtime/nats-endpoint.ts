import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { serversOf } from '../actors/nats.js';
import { authorizationConfig, generateCredentials, loadCredentials, type NatsCredentials } from '../actors/nats-roles.js';
import type { Config } from './config.js';
import { isNatsServer, startNatsServer, stopPid } from './nats-server.js';

export interface NatsEndpoint {
  url: string;
  /** Which NATS this is, for the start-up line: external, or a private server started or reused. */
  description: string;
  /** The users of the roles, on a server that needs them. */
  credentials?: NatsCredentials;
  /** Stops the private server this process owns. */
  stop?: () => Promise<void>;
}

/** Whether a NATS server answers at `url` (a server that wants credentials answers too). */
async function answers(url: string): Promise<boolean> {
  try {
    const nc = await connect({ servers: serversOf(url), timeout: 1_500, reconnect: false });
    await nc.close();
    return true;
  } catch (error) {
    return /authorization/i.test(String(error));
  }
}

/**
 * The NATS to use: NATS_URL when given (it must answer), with the role users of PACT_NATS_CREDENTIALS when
 * set; else, unless PACT_PRIVATE_NATS=1, the default address when it answers; else a private nats-server
 * with its store under the data directory. A private server is the service's own: reused across restarts
 * while it runs, stopped when the service stops, and it gives each role its user and permissions
 * (`actors/nats-roles.ts`), kept in `<data>/nats-credentials.json`.
 */
export async function natsEndpoint(config: Config): Promise<NatsEndpoint> {
  if (config.natsUrlGiven || !config.privateNats) {
    const credentials = config.natsCredentialsFile ? loadCredentials(config.natsCredentialsFile) : undefined;
    const source = config.natsUrlGiven ? 'NATS_URL' : 'the default address';
    if (await answers(config.natsUrl)) return { url: config.natsUrl, credentials, description: `NATS at ${config.natsUrl} (${source})` };
    if (config.natsUrlGiven) throw new Error(`NATS at ${config.natsUrl} does not answer`);
  }
  return privateServer(config.dataDir);
}

async function privateServer(dataDir: string): Promise<NatsEndpoint> {
  const credentials = privateServerCredentials(dataDir);
  const record = join(dataDir, 'nats-server.json');
  const store = join(dataDir, 'nats');
  if (existsSync(record)) {
    const { url, pid } = JSON.parse(readFileSync(record, 'utf8')) as { url: string; pid: number };
    // A recorded pid may since belong to anything: trust it only while it is our nats-server on our store.
    if (isNatsServer(pid, store) && (await answers(url))) {
      return { url, credentials, description: `private nats-server at ${url} (reused, pid ${pid})`, stop: () => stopPid(pid) };
    }
  }
  const authFile = join(dataDir, 'nats-auth.conf');
  writeFileSync(authFile, authorizationConfig(credentials), { mode: 0o600 });
  const server = await startNatsServer(store, ['-c', authFile]);
  writeFileSync(record, JSON.stringify({ url: server.url, pid: server.pid }));
  return { url: server.url, credentials, description: `private nats-server at ${server.url} (started, pid ${server.pid})`, stop: server.stop };
}

/** The private server's role users: made once, then kept beside its store. */
function privateServerCredentials(dataDir: string): NatsCredentials {
  const file = join(dataDir, 'nats-credentials.json');
  if (!existsSync(file)) {
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(file, JSON.stringify(generateCredentials(), null, 2), { mode: 0o600 });
  }
  return loadCredentials(file);
}
