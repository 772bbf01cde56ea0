import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { connect } from '@nats-io/transport-node';
import { serversOf } from '../actors/nats.js';
import { authorizationConfig, generateCredentials, loadCredentials, type NatsCredentials } from '../actors/nats-roles.js';
import type { Config } from './config.js';
import { startNatsServer } from './nats-server.js';

export interface NatsEndpoint {
  url: string;
  /** The users of the roles, on a server that needs them. */
  credentials?: NatsCredentials;
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
 * set; else the default when it answers; else a private nats-server with its store under the data
 * directory, reused across restarts while it still runs. A private server gets a user per role with the
 * roles' permissions (`actors/nats-roles.ts`), kept in `<data>/nats-credentials.json`.
 */
export async function natsEndpoint(config: Config): Promise<NatsEndpoint> {
  const credentials = config.natsCredentialsFile ? loadCredentials(config.natsCredentialsFile) : undefined;
  if (await answers(config.natsUrl)) return { url: config.natsUrl, credentials };
  if (config.natsUrlGiven) throw new Error(`NATS at ${config.natsUrl} does not answer`);
  const record = join(config.dataDir, 'nats-server.json');
  const privateCredentials = privateServerCredentials(config.dataDir);
  if (existsSync(record)) {
    const { url } = JSON.parse(readFileSync(record, 'utf8')) as { url: string };
    if (await answers(url)) return { url, credentials: privateCredentials };
  }
  const authFile = join(config.dataDir, 'nats-auth.conf');
  writeFileSync(authFile, authorizationConfig(privateCredentials), { mode: 0o600 });
  const server = await startNatsServer(join(config.dataDir, 'nats'), ['-c', authFile]);
  writeFileSync(record, JSON.stringify({ url: server.url, pid: server.pid }));
  return { url: server.url, credentials: privateCredentials, stop: server.stop };
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
