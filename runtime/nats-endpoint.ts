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

type Answer = 'open' | 'users only' | 'none';

/** How a NATS server at `url` answers a client without a user. */
async function answerAt(url: string): Promise<Answer> {
  try {
    const nc = await connect({ servers: serversOf(url), timeout: 1_500, reconnect: false });
    await nc.close();
    return 'open';
  } catch (error) {
    return /authorization/i.test(String(error)) ? 'users only' : 'none';
  }
}

/**
 * The NATS to use. NATS_URL when given (it must answer), with the role users of PACT_NATS_CREDENTIALS when
 * set; one that takes clients without a user is used, but said loudly, since then anyone who reaches it can
 * write the journal. Without NATS_URL, a private nats-server with its store under the data directory: the
 * service's own, reused across restarts while it runs, stopped when the service stops, and giving each role
 * its user and permissions (`actors/nats-roles.ts`), kept in `<data>/nats-credentials.json`.
 */
export async function natsEndpoint(config: Config): Promise<NatsEndpoint> {
  if (!config.natsUrl) return privateServer(config.dataDir);
  const answer = await answerAt(config.natsUrl);
  if (answer === 'none') throw new Error(`NATS at ${config.natsUrl} does not answer`);
  const credentials = config.natsCredentialsFile ? loadCredentials(config.natsCredentialsFile) : undefined;
  const open = answer === 'open' ? ', which takes clients without a user: anyone who reaches it can write the journal (see README, NATS users)' : '';
  return { url: config.natsUrl, credentials, description: `NATS at ${config.natsUrl} (NATS_URL)${open}` };
}

async function privateServer(dataDir: string): Promise<NatsEndpoint> {
  const credentials = privateServerCredentials(dataDir);
  const record = join(dataDir, 'nats-server.json');
  const store = join(dataDir, 'nats');
  const authFile = join(dataDir, 'nats-auth.conf');
  const auth = authorizationConfig(credentials);
  if (existsSync(record)) {
    const { url, pid } = JSON.parse(readFileSync(record, 'utf8')) as { url: string; pid: number };
    // A recorded pid may since belong to anything: trust it only while it is our nats-server on our store,
    // only while it takes no client without a user (one started by older code did), and only while it runs
    // this version's role permissions (a newer version may let a role publish on new subjects).
    if (isNatsServer(pid, store)) {
      if (sameText(authFile, auth) && (await answerAt(url)) === 'users only') {
        return { url, credentials, description: `private nats-server at ${url} (reused, pid ${pid})`, stop: () => stopPid(pid) };
      }
      await stopPid(pid);
    }
  }
  writeFileSync(authFile, auth, { mode: 0o600 });
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

const sameText = (file: string, text: string) => existsSync(file) && readFileSync(file, 'utf8') === text;
